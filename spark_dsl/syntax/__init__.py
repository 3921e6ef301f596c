"""The syntax layer: `.spark` text to a typed AST, with located syntax errors."""
