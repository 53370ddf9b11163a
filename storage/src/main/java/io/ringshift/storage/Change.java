package io.ringshift.storage;

/**
 * One write in a store's change feed: the sequence number the store's log gave it and what it wrote.
 *
 * @param sequence the write's sequence number, a real offset in the store's log
 * @param entry the key and its new value, or a deletion
 */
public record Change(long sequence, Entry entry) {}
