package io.ringshift.worker.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.ringshift.worker.Limits;
import org.junit.jupiter.api.Test;

class SlotsTest {

  @Test
  void shouldCapTasksPerWorkerSourceAndTargetAndSayWhich() {
    Slots slots = new Slots(Limits.DEFAULTS.withCaps(3, 2, 2));
    assertThat(slots.tryAcquire("a", "x")).isNull();
    assertThat(slots.tryAcquire("a", "y")).isNull();
    assertThat(slots.tryAcquire("a", "z"))
        .isEqualTo("waiting for a copy slot: 2 tasks copying from source a (max 2 per source)");
    assertThat(slots.tryAcquire("b", "x")).isNull();
    assertThat(slots.tryAcquire("c", "x"))
        .isEqualTo("waiting for a copy slot: 3 tasks running in this worker (max 3)");
    slots.release("a", "y");
    assertThat(slots.tryAcquire("c", "x"))
        .isEqualTo("waiting for a copy slot: 2 tasks copying to target x (max 2 per target)");
    assertThat(slots.tryAcquire("c", "y")).isNull();
    assertThat(slots.running()).isEqualTo(3);
  }

  @Test
  void shouldApplyALoweredCapToNewTasksOnly() {
    Slots slots = new Slots(Limits.DEFAULTS.withCaps(4, 4, 4));
    assertThat(slots.tryAcquire("a", "x")).isNull();
    assertThat(slots.tryAcquire("a", "y")).isNull();
    slots.setLimits(Limits.DEFAULTS.withCaps(1, 4, 4));
    assertThat(slots.tryAcquire("b", "z")).startsWith("waiting for a copy slot: 2 tasks running");
    slots.release("a", "x");
    slots.release("a", "y");
    assertThat(slots.tryAcquire("b", "z")).isNull();
  }

  @Test
  void shouldWakeOnlyTheWaitersAFreedSlotFitsAndKeepThemInLine() {
    Slots slots = new Slots(Limits.DEFAULTS.withCaps(2, 1, 2));
    assertThat(slots.tryAcquire("a", "x")).isNull();
    assertThat(slots.tryAcquire("b", "y")).isNull();
    java.util.List<String> woken = new java.util.ArrayList<>();
    assertThat(slots.tryAcquire("a", "z", "w1", () -> woken.add("w1"))).startsWith("waiting");
    assertThat(slots.tryAcquire("c", "z", "w2", () -> woken.add("w2"))).startsWith("waiting");
    assertThat(slots.tryAcquire("d", "z", "w3", () -> woken.add("w3"))).startsWith("waiting");
    assertThat(slots.waiting()).isEqualTo(3);

    // One slot in the worker is free, but source a still copies: w1 cannot take it, w2 can, and w3 waits on.
    slots.release("b", "y");
    assertThat(woken).containsExactly("w2");
    assertThat(slots.tryAcquire("c", "z", "w2", () -> woken.add("w2 again"))).isNull();
    assertThat(slots.waiting()).isEqualTo(2);

    slots.release("a", "x");
    assertThat(woken).containsExactly("w2", "w1");
    // w1 was woken for the free slot and keeps its place: a newcomer, or w3 behind it, does not take the slot.
    assertThat(slots.tryAcquire("e", "q", "newcomer", () -> {})).isEqualTo(
        "waiting for a copy slot: tasks that came first take the free ones");
    assertThat(slots.tryAcquire("d", "z", "w3", () -> woken.add("w3"))).startsWith("waiting for a copy slot: tasks that");
    assertThat(slots.tryAcquire("a", "z", "w1", () -> {})).isNull();
    slots.cancelWait("newcomer");
    slots.setLimits(Limits.DEFAULTS.withCaps(4, 1, 4));
    assertThat(woken).as("new caps wake every waiter").containsExactly("w2", "w1", "w3");
    assertThat(slots.waiting()).as("w3 stays in line until it takes a slot").isEqualTo(1);
    assertThat(slots.tryAcquire("d", "z", "w3", () -> {})).isNull();
    assertThat(slots.waiting()).isZero();
  }

  @Test
  void shouldLetATaskPastTheLineWhenThereIsRoomForBothAndPassAWakeOnWhenAWaiterLeaves() {
    Slots slots = new Slots(Limits.DEFAULTS.withCaps(3, 1, 3));
    assertThat(slots.tryAcquire("a", "x")).isNull();
    java.util.List<String> woken = new java.util.ArrayList<>();
    assertThat(slots.tryAcquire("a", "y", "w1", () -> woken.add("w1")))
        .isEqualTo("waiting for a copy slot: 1 tasks copying from source a (max 1 per source)");
    // w1 waits for source a: a copy from source b fits beside it, so it does not wait behind it.
    assertThat(slots.tryAcquire("b", "y", "w2", () -> woken.add("w2"))).isNull();
    assertThat(slots.waiting()).isEqualTo(1);

    Slots one = new Slots(Limits.DEFAULTS.withCaps(1, 1, 1));
    assertThat(one.tryAcquire("a", "x")).isNull();
    assertThat(one.tryAcquire("b", "y", "w1", () -> woken.add("one w1"))).startsWith("waiting");
    assertThat(one.tryAcquire("c", "z", "w2", () -> woken.add("one w2"))).startsWith("waiting");
    one.release("a", "x");
    assertThat(woken).containsExactly("one w1");
    // w1 stops before it takes the slot it was woken for: the wake passes to w2.
    one.cancelWait("w1");
    assertThat(woken).containsExactly("one w1", "one w2");
    assertThat(one.tryAcquire("c", "z", "w2", () -> {})).isNull();
  }
}
