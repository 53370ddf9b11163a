/**
 * The live web dashboard of a control plane ({@link io.ringshift.dashboard.Dashboard}) and its settings ({@link
 * io.ringshift.dashboard.DashboardConfig}). Its reader of the topics, its state model and its HTTP server live in
 * {@code io.ringshift.dashboard.internal}; the page in {@code io/ringshift/dashboard/static/}.
 */
package io.ringshift.dashboard;
