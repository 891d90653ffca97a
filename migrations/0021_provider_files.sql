-- PDFs through the Files API (issue 20, part 4; `pipeline::anthropic::files`).
--
-- `file_id` is the provider's id of the job's PDF once it has been uploaded to the Files API
-- (`POST /v1/files`): every request of the job then reads it by reference — the sync call,
-- count_tokens, a Message Batch line, a retry — instead of carrying the PDF as base64. It is
-- set once (`WHERE file_id IS NULL`); a replay of the job starts with the original's. Retention
-- deletes the file from the provider (`DELETE /v1/files/{file_id}`) with the job's PDF in R2.
-- NULL: not uploaded (yet), or the Files API is not available (the request carries base64).

ALTER TABLE jobs ADD COLUMN file_id TEXT;
