/**
 * The wire formats of ringshift: Avro codecs for every record it writes, behind the {@link
 * io.ringshift.schemas.AvroSerde} seam. {@link io.ringshift.schemas.RingSnapshotCodec} turns ring snapshots into
 * bytes and back; every failure is a {@link io.ringshift.schemas.CodecException}. The generated record classes
 * live in {@code io.ringshift.schemas.avro}; {@code io.ringshift.schemas.internal} is not API.
 */
package io.ringshift.schemas;
