#pragma once
// A runner never outlives its agent (docs/operations.md). The agent arms the
// parent-death signal of the runner it starts; a runner started by another
// launcher (a rank under mpirun) arms its own against that launcher when the
// agent asks for it with TORCHSWEEP_DIE_WITH_PARENT=1, so the chain agent ->
// mpirun -> ranks ends together however the agent ends.
namespace ts {

// With TORCHSWEEP_DIE_WITH_PARENT=1: SIGKILL when the parent ends, and an
// immediate exit if it has already ended. Otherwise nothing.
void die_with_parent_if_asked();

}  // namespace ts
