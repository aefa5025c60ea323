package analyze

import "github.com/ibscope/ibscope/telemetry"

// A whole run of one analysis over streams already open: what the tests
// do, and the external tests (package analyze_test) too through RunBuffer
// and RunTick. Commands go through Run with the analysis' constructor.

var (
	RunBuffer = runBuffer
	RunTick   = runTick
	// DetectPhases is the phases of a whole series at once, as the
	// streaming detector finds them (ipd --phases, tick).
	DetectPhases = detectPhases
)

// runFlows reads the stream to its end through a flows analysis, with
// opts if given. progress, if not nil, is called every 65536 packets.
func runFlows(s *Stream, progress func(s *Stream), opts ...FlowsOptions) (*FlowsReport, error) {
	var o FlowsOptions
	if len(opts) > 0 {
		o = opts[0]
	}
	return Run(s, NewFlowsAnalysis(o), RunOptions[*FlowsReport]{Progress: progress})
}

// runIPD reads the stream to its end through an IPD analysis. progress, if
// not nil, is called every 65536 packets.
func runIPD(s *Stream, cfg IPDOptions, progress func(s *Stream)) (*IPDReport, error) {
	a, err := NewIPDAnalysis(cfg, s.ResolutionNs)
	if err != nil {
		return nil, err
	}
	if err := cfg.Hist.Validate(s.ResolutionNs()); err != nil {
		return nil, err
	}
	return Run(s, a, RunOptions[*IPDReport]{Progress: progress})
}

// runBuffer runs a BufferAnalysis over the senders, then the receiver.
func runBuffer(senders, receiver *Stream, opts BufferOptions) (*BufferReport, error) {
	a, err := NewBufferAnalysis(opts)
	if err != nil {
		return nil, err
	}
	if _, err := Run(senders, a.Sent(), RunOptions[[]BufferSender]{}); err != nil {
		return nil, err
	}
	return Run(receiver, a, RunOptions[*BufferReport]{})
}

// runTick estimates the PortXmitWait tick from a capture of the port's
// transmissions and the port's telemetry.
func runTick(s *Stream, series []*telemetry.Series, telemetryName string, opts TickOptions) (*TickReport, error) {
	a, err := NewTickAnalysis(series, telemetryName, opts)
	if err != nil {
		return nil, err
	}
	return Run(s, a, RunOptions[*TickReport]{})
}
