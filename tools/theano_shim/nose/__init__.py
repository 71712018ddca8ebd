"""The parts of nose that Theano's tests import, on unittest and pytest (nose does not
run on Python 3.12)."""
