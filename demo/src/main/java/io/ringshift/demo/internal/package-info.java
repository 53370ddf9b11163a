/**
 * The demo's implementation, not API: the scenario ({@link io.ringshift.demo.internal.DemoScenario}), the bulk load,
 * the application's writer and reader ({@link io.ringshift.demo.internal.DemoApplication}), the view of the topics it keeps,
 * the live progress line, the checks at the end and the HTML report.
 */
package io.ringshift.demo.internal;
