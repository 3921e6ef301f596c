"""Emitters that place a plan's launches into deployable files, one module per target."""
