package io.ringshift.storage;

/**
 * What a {@link Store#load} did.
 *
 * @param entries the entries loaded
 * @param bytes their key plus value bytes
 * @param ingested whether they were ingested as table files (true) or went through the write path (false)
 * @param sequence the store's latest sequence number after the load (an ingest takes none)
 */
public record LoadResult(long entries, long bytes, boolean ingested, long sequence) {}
