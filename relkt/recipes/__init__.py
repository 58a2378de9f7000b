"""Recipes over the stages and scorers, importable and tested: cross-validation by fold (`crossval`), one student per
language group (`groups`), results side by side with significance (`comparison`), and the setups file that names
each experiment's recipe and configs (`setups`). The scripts in `trainers/` are their command lines."""
