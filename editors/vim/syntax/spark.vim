" Vim syntax for .spark deployment specs (the same scopes as editors/spark.tmLanguage.json).
if exists("b:current_syntax")
  finish
endif
syntax iskeyword @,48-57,_,192-255,-

syntax match   sparkComment    "#.*$" contains=sparkIgnore,sparkCode
syntax match   sparkIgnore     "spark:\s*ignore\ze\[" contained
syntax match   sparkCode       "\<SPK\d\{3}\>" contained
syntax keyword sparkImport     import
syntax keyword sparkDeclare    profile deployment nextgroup=sparkName skipwhite
" `model` declares only where a statement starts; elsewhere (`model = ...`) it is a key.
syntax match   sparkDeclare    "^model\ze\s\+[A-Za-z][A-Za-z0-9_-]*\s*{" nextgroup=sparkName skipwhite
syntax match   sparkName       "[A-Za-z][A-Za-z0-9_-]*" contained
syntax keyword sparkExtends    extends
syntax keyword sparkBoolean    true false
syntax region  sparkString     start=+"+ skip=+\\\\\|\\"+ end=+"\|$+ contains=sparkEscape
syntax match   sparkEscape     +\\\(["\\nt]\|u{\x\{1,6}}\)+ contained
syntax match   sparkQuantity   "\<\(\d[0-9_]*\(\.\d[0-9_]*\)\=\a\+\)\+\>"
syntax match   sparkNumber     "\<\d[0-9_]*\(\.\d[0-9_]*\)\=\>"
syntax match   sparkKey        "[A-Za-z][A-Za-z0-9_-]*\ze\s*="
syntax match   sparkCall       "[A-Za-z][A-Za-z0-9_-]*\ze("
syntax match   sparkOperator   "[=+]"

highlight default link sparkComment  Comment
highlight default link sparkIgnore   PreProc
highlight default link sparkCode     Special
highlight default link sparkImport   Include
highlight default link sparkDeclare  Structure
highlight default link sparkName     Identifier
highlight default link sparkExtends  Keyword
highlight default link sparkBoolean  Boolean
highlight default link sparkString   String
highlight default link sparkEscape   SpecialChar
highlight default link sparkQuantity Number
highlight default link sparkNumber   Number
highlight default link sparkKey      Identifier
highlight default link sparkCall     Function
highlight default link sparkOperator Operator

let b:current_syntax = "spark"
