-- torchsweep store, migration 17: the image layout a result ran in (#54).
--  * data_layout: execution.data_layout, NCHW or NHWC (the PyTorch runners
--    with the job's memory_format channels_last, TensorFlow and JAX always),
--    NULL for models without images. The query axis memory_format reads it
--    (docs/query.md). Older rows: the PyTorch runners ran NCHW, the
--    Keras-based ones wrote theirs into the document.
ALTER TABLE results ADD COLUMN data_layout TEXT;
UPDATE results SET data_layout = (
  SELECT json_extract(d.document, '$.execution.data_layout') FROM result_documents d
  WHERE d.job_id = results.job_id AND d.attempt = results.attempt);
UPDATE results SET data_layout = 'NCHW'
  WHERE data_layout IS NULL AND runner IN ('libtorch', 'torch-compile') AND model LIKE 'resnet%';
