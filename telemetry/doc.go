// Package telemetry owns NIC counters: it reads DOCA telemetry_diag CSV,
// Linux sysfs, perfquery text and ibscope's own sidecar into one sample model
// (Series: samples of one port on one clock, a Counter per column), samples
// sysfs into a sidecar during a capture (SysfsSampler, SidecarWriter), and
// turns readings into deltas and rates that honour wrap, saturation,
// clear-on-sample and lost samples (Delta and its DeltaFlags).
//
// docs/telemetry.md gives the rules: the sample model and its bounds, when a
// drop is a wrap and when a reset, what each flag means, and what each source
// format may hold. The examples show reading a file, taking rates and
// sampling during a capture.
//
// The package imports nothing else from ibscope.
package telemetry
