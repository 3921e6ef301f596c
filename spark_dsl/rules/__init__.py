"""The recipe's rules: small registered checks over a plan, each with its code and explain text."""
