from castlab.cli import run

run()
