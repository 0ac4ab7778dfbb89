-- torchsweep store, migration 26: agents' model lists kept once each
-- (#53, shared/model_lists.hpp, docs/protocol.md "Model lists"). An agent's
-- capabilities (agents.capabilities) name each runner's --list-models by
-- its digest; the names are here, by that digest. Agents registered before
-- keep their lists inline, which readers take as well.
CREATE TABLE model_lists (
  digest TEXT PRIMARY KEY,  -- sha256:HEX of the list's JSON text
  names TEXT NOT NULL       -- the JSON array of model names
) WITHOUT ROWID;
