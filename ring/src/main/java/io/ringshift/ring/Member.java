package io.ringshift.ring;

/**
 * A physical node of the ring: a stable id, the availability zone it runs in, its relative weight and its
 * state. Token {@code i} of the member is derived from {@code id + "#" + i} only, so the id must never be
 * reused for another machine.
 *
 * @param id stable node id, not blank, at most {@value #MAX_ID_LENGTH} characters, no control characters, no
 *     unpaired surrogates
 * @param zone availability zone, same rules as the id
 * @param weight relative capacity, finite and &gt; 0; the member gets {@code round(weight * vnodes)} tokens
 * @param state whether clients may read from it
 * @throws RingException when a field breaks its rule; the message names the field and the value
 */
public record Member(String id, String zone, double weight, MemberState state) {
  /** Longest accepted id or zone, in characters. */
  public static final int MAX_ID_LENGTH = 256;

  public Member {
    requireName("id", id);
    requireName("zone", zone);
    if (!Double.isFinite(weight) || weight <= 0) {
      throw RingException.of("member %s: weight was %s; weight must be finite and > 0", id, weight);
    }
    if (state == null) {
      throw RingException.of("member %s: state was missing; state must be ACTIVE or FILLING", id);
    }
  }

  /** An active member of weight 1. */
  public static Member of(String id, String zone) {
    return new Member(id, zone, 1.0, MemberState.ACTIVE);
  }

  /** An active member of the given weight. */
  public static Member of(String id, String zone, double weight) {
    return new Member(id, zone, weight, MemberState.ACTIVE);
  }

  public Member withWeight(double newWeight) {
    return new Member(id, zone, newWeight, state);
  }

  public Member withState(MemberState newState) {
    return new Member(id, zone, weight, newState);
  }

  /** True when clients may read from this member. */
  public boolean readEligible() {
    return state == MemberState.ACTIVE;
  }

  private static void requireName(String field, String value) {
    if (value == null) {
      throw RingException.of("member %s was missing; every member needs a non-blank %s", field, field);
    }
    if (value.isBlank()) {
      throw RingException.of("member %s was \"%s\"; %s must not be blank", field, value, field);
    }
    if (value.length() > MAX_ID_LENGTH) {
      throw RingException.of(
          "member %s was %d characters long; %s must be at most %d characters",
          field, value.length(), field, MAX_ID_LENGTH);
    }
    for (int i = 0; i < value.length(); i++) {
      if (Character.isISOControl(value.charAt(i))) {
        throw RingException.of(
            "member %s was \"%s\"; %s must not contain control characters (found U+%04X)",
            field, value.replaceAll("\\p{Cntrl}", "?"), field, (int) value.charAt(i));
      }
    }
    int bad = unpairedSurrogate(value);
    if (bad >= 0) {
      throw RingException.of(
          "member %s was \"%s\"; %s must be well-formed Unicode (unpaired surrogate U+%04X at index %d)",
          field, escapeSurrogates(value), field, (int) value.charAt(bad), bad);
    }
  }

  /**
   * Index of the first unpaired surrogate, or -1. Ids, zones and cluster ids are hashed, ordered and
   * checksummed as UTF-8, where Java writes every unpaired surrogate as {@code '?'}: two different names would
   * become the same bytes, and the member order (hence the checksum) would depend on insertion order.
   */
  static int unpairedSurrogate(String value) {
    for (int i = 0; i < value.length(); i++) {
      char c = value.charAt(i);
      if (Character.isHighSurrogate(c) && i + 1 < value.length() && Character.isLowSurrogate(value.charAt(i + 1))) {
        i++;
      } else if (Character.isSurrogate(c)) {
        return i;
      }
    }
    return -1;
  }

  /** The value with each unpaired surrogate written as {@code \\uXXXX}, so that a message can show it. */
  static String escapeSurrogates(String value) {
    StringBuilder out = new StringBuilder(value.length() + 8);
    for (int i = 0; i < value.length(); i++) {
      char c = value.charAt(i);
      if (Character.isHighSurrogate(c) && i + 1 < value.length() && Character.isLowSurrogate(value.charAt(i + 1))) {
        out.append(c).append(value.charAt(++i));
      } else if (Character.isSurrogate(c)) {
        out.append(String.format(java.util.Locale.ROOT, "\\u%04X", (int) c));
      } else {
        out.append(c);
      }
    }
    return out.toString();
  }
}
