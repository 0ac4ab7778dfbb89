-- torchsweep store, migration 18: config_medians is no longer spelled here.
-- It grouped by 10 columns while a configuration is named by more (a
-- language model's seq_len, prompt_len and new_tokens, the data, the image
-- layout), so it pooled configurations `torchsweep query` keeps apart, and
-- it counted `torchsweep confirm`'s reruns with the sweep's own runs.
-- The view is now generated from store/configuration.cpp's list of
-- configuration axes, the list query groups by, whenever a writer opens the
-- store (docs/store.md); `compiler` left it: it follows mode and runner.
DROP VIEW IF EXISTS config_medians;
