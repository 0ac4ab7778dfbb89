"""How a runner refuses a job (docs/worker.md's exit codes): a job that is
not valid, and a valid one this machine or framework cannot run. Apart from
contract.py, so that every harness module can raise them without importing
the contract."""


class InvalidJob(Exception):
    def __init__(self, field, problem):
        super().__init__(f"{field}: {problem}" if field else problem)
        self.field = field


class Unsupported(Exception):
    """The job is valid but this machine or framework cannot run it."""
