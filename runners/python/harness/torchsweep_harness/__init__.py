"""The harness every Python runner of torchsweep shares (docs/runners.md).

A runner adds only what is its framework's own: its models, its step, its
synchronisation and its memory probe. The contract (job in, result out,
exit codes, log lines and progress file, schemas/runner_contract.json), job
validation with a real JSON Schema validator against the installed schemas,
the defaults (schemas/job.schema.json and schemas/models.json, which the C++
side reads too), the timed-epoch loop, the CPU memory phases and the host
context live here, once. What the measurements mean is judged by the agent
(agent/judge/), for every runner alike.
"""
