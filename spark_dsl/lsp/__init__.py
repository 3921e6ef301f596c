"""The `.spark` language server: diagnostics, hover, completion, fixes, navigation, one pipeline.

Only `spark lsp` and the tests import this package; it needs pygls and lsprotocol.
"""
