"""Lesson packs: the model (`model`), how one file is read and checked (`checker`), and the
loader that reads every pack under a folder and reports every problem (`loader`)."""
