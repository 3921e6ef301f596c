"""The plan: a deployment resolved against the recipe, with capacity and launches; every value says why."""
