" .spark deployment specs
autocmd BufRead,BufNewFile *.spark setfiletype spark
