/**
 * {@code ringshift demo}: the whole control plane at work from one command ({@link io.ringshift.demo.Demo}), its
 * settings ({@link io.ringshift.demo.DemoSettings}) and what it measured ({@link io.ringshift.demo.DemoResult}). The
 * scenario, the workload and the checks live in {@code io.ringshift.demo.internal}.
 */
package io.ringshift.demo;
