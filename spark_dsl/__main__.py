"""`python -m spark_dsl`: the same as the `spark` command."""

from spark_dsl.cli import main

if __name__ == "__main__":
    main()
