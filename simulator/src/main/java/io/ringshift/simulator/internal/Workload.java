package io.ringshift.simulator.internal;

import com.dynatrace.hash4j.hashing.Hasher64;
import com.dynatrace.hash4j.hashing.Hashing;
import io.ringshift.simulator.SimulationParameters;
import io.ringshift.simulator.SimulationResult;
import java.util.Arrays;

/**
 * The simulated keys: their bytes, their ring position, their value size and their request rate, held in
 * primitive arrays indexed by key number.
 *
 * <p>Design: every per-key quantity is a pure function of {@code (seed, key number)}, so the workload is the
 * same in any JVM and on any number of threads.
 *
 * <ul>
 *   <li>Key {@code i} is {@code "key-"} followed by 12 lower-case hex digits of a seeded bijection of {@code i}
 *       on 48 bits: 16 bytes, unique by construction, spread like real ids.
 *   <li>Its position is XXH3-64 (seed 0) of those bytes: the ring hash, shared by every scheme.
 *   <li>Its request rate follows Zipf: the key of rank {@code i + 1} gets {@code (i + 1)^-s / H} of
 *       {@link SimulationParameters#totalQps()}. Because names are pseudo-random, popularity is independent of
 *       position and size.
 *   <li>Its value size is log-normal: {@code median * exp(sigma * z)} with {@code z} standard normal (Box-Muller
 *       over a SplitMix64 stream, {@link StrictMath} so the sizes do not depend on CPU intrinsics), at least one
 *       byte.
 * </ul>
 */
final class Workload {
  static final int KEY_LENGTH = 16;
  private static final byte[] PREFIX = {'k', 'e', 'y', '-'};
  private static final byte[] HEX = "0123456789abcdef".getBytes(java.nio.charset.StandardCharsets.US_ASCII);
  private static final long MASK48 = (1L << 48) - 1;
  private static final Hasher64 XXH3 = Hashing.xxh3_64();

  final int count;
  /** Key bytes, {@link #KEY_LENGTH} per key, back to back. */
  final byte[] keyBytes;
  /** XXH3-64 of each key's bytes: its ring position and the input of every placement scheme. */
  final long[] hashes;
  final int[] valueBytes;
  final double[] qps;
  final long totalBytes;
  final double totalQps;

  private Workload(byte[] keyBytes, long[] hashes, int[] valueBytes, double[] qps, double totalQps) {
    this.count = hashes.length;
    this.keyBytes = keyBytes;
    this.hashes = hashes;
    this.valueBytes = valueBytes;
    this.qps = qps;
    long bytes = 0;
    for (int size : valueBytes) {
      bytes += size;
    }
    this.totalBytes = bytes;
    this.totalQps = totalQps;
  }

  static Workload generate(SimulationParameters p) {
    int n = p.keys();
    byte[] keyBytes = new byte[n * KEY_LENGTH];
    long[] hashes = new long[n];
    int[] sizes = new int[n];
    double[] qps = new double[n];
    long nameOffset = SplitMix.mix64(p.seed() ^ 0x6B65792D6E616D65L) & MASK48;
    long sizeStream = SplitMix.mix64(p.seed() ^ 0x76616C75652D737AL);
    double logMedian = StrictMath.log(p.valueMedianBytes());
    for (int i = 0; i < n; i++) {
      int off = i * KEY_LENGTH;
      writeKey(permute48((i + nameOffset) & MASK48), keyBytes, off);
      hashes[i] = XXH3.hashBytesToLong(keyBytes, off, KEY_LENGTH);
      sizes[i] = logNormalSize(sizeStream, i, logMedian, p.valueSigma());
    }
    double harmonic = 0;
    for (int i = 0; i < n; i++) {
      qps[i] = StrictMath.pow(i + 1, -p.zipfExponent());
      harmonic += qps[i];
    }
    double scale = p.totalQps() / harmonic;
    for (int i = 0; i < n; i++) {
      qps[i] *= scale;
    }
    return new Workload(keyBytes, hashes, sizes, qps, p.totalQps());
  }

  /** The key's bytes as a string (for reports). */
  String key(int i) {
    return new String(keyBytes, i * KEY_LENGTH, KEY_LENGTH, java.nio.charset.StandardCharsets.US_ASCII);
  }

  /** Size statistics and request skew of the workload. */
  SimulationResult.WorkloadSummary summary(SimulationParameters p) {
    int[] sorted = valueBytes.clone();
    Arrays.sort(sorted);
    double hottest = qps[0] / totalQps;
    int top = Math.max(1, count / 100);
    double topShare = 0;
    for (int i = 0; i < top; i++) {
      topShare += qps[i];
    }
    return new SimulationResult.WorkloadSummary(
        count,
        KEY_LENGTH,
        key(0),
        p.zipfExponent(),
        totalQps,
        hottest,
        hottest * p.nodes(),
        topShare / totalQps,
        p.valueMedianBytes(),
        p.valueSigma(),
        totalBytes,
        (double) totalBytes / count,
        percentile(sorted, 0.5),
        percentile(sorted, 0.99),
        sorted[sorted.length - 1]);
  }

  private static long percentile(int[] sorted, double q) {
    int index = (int) Math.min(sorted.length - 1, Math.floor(q * sorted.length));
    return sorted[index];
  }

  private static void writeKey(long id, byte[] out, int off) {
    System.arraycopy(PREFIX, 0, out, off, PREFIX.length);
    for (int d = 0; d < 12; d++) {
      out[off + PREFIX.length + d] = HEX[(int) (id >>> (44 - 4 * d)) & 0xF];
    }
  }

  /**
   * A bijection on 48 bits (xor-shifts and odd multipliers are invertible modulo 2^48), so distinct key numbers
   * always give distinct names.
   */
  static long permute48(long x) {
    x ^= x >>> 23;
    x = (x * 0x9E3779B97F4BL) & MASK48;
    x ^= x >>> 21;
    x = (x * 0xC2B2AE3D27D5L) & MASK48;
    x ^= x >>> 24;
    return x;
  }

  private static int logNormalSize(long stream, int i, double logMedian, double sigma) {
    long a = SplitMix.mix64(stream + 2L * i * 0x9E3779B97F4A7C15L);
    long b = SplitMix.mix64(a ^ 0xD1B54A32D192ED03L);
    double u1 = ((a >>> 11) + 1) * 0x1p-53; // (0, 1]: log(u1) is finite
    double u2 = (b >>> 11) * 0x1p-53;
    double z = StrictMath.sqrt(-2.0 * StrictMath.log(u1)) * StrictMath.cos(2 * Math.PI * u2);
    double size = StrictMath.exp(logMedian + sigma * z);
    return (int) Math.max(1, Math.min(Integer.MAX_VALUE, Math.round(size)));
  }
}
