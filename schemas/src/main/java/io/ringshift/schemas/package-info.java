/**
 * The wire formats of ringshift: Avro codecs for every record it writes, behind the {@link
 * io.ringshift.schemas.AvroSerde} seam. {@link io.ringshift.schemas.RecordSerdes} gives the serde of each topic's
 * record; {@link io.ringshift.schemas.RingSnapshotCodec} turns ring snapshots into bytes and back, rebuilding and
 * verifying the ring; {@link io.ringshift.schemas.RecordKeys} builds the topics' keys and task ids. Every failure
 * is a {@link io.ringshift.schemas.CodecException}. The generated record classes live in {@code
 * io.ringshift.schemas.avro} (schemas in {@code schemas/src/main/avro}, described in {@code docs/schemas.md});
 * {@code io.ringshift.schemas.internal} is not API.
 */
package io.ringshift.schemas;
