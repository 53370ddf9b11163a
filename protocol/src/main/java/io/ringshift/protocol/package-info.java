/**
 * The wire formats of ringshift: Avro codecs for every record it writes, behind the {@link
 * io.ringshift.protocol.AvroSerde} seam. {@link io.ringshift.protocol.RecordSerdes} gives the serde of each topic's
 * record; {@link io.ringshift.protocol.RingSnapshotCodec} turns ring snapshots into bytes and back, rebuilding and
 * verifying the ring; {@link io.ringshift.protocol.RecordKeys} builds the topics' keys and task ids. Every failure
 * is a {@link io.ringshift.protocol.CodecException}. The generated record classes live in {@code
 * io.ringshift.schemas.avro} (schemas in {@code protocol/src/main/avro}, described in {@code docs/schemas.md});
 * {@code io.ringshift.protocol.internal} is not API.
 */
package io.ringshift.protocol;
