/**
 * The health manager: probes every member's {@code /health} and writes a FAIL to {@code ring.membership} only after
 * a debounced outage, with one manager deciding at a time through a Kafka lease (docs/operations.md, "Failure
 * detection"). {@link io.ringshift.health.HealthManager} runs it, configured by
 * {@link io.ringshift.health.HealthManagerConfig}. Implementation details live in {@code io.ringshift.health.internal}.
 */
package io.ringshift.health;
