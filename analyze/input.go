package analyze

import "github.com/ibscope/ibscope/capfile"

// Disorder reports timestamps out of order in the input.
type Disorder struct {
	OutOfOrder    int            `json:"out_of_order"`         // frames stamped before their predecessor in the file
	First         *capfile.Where `json:"first,omitempty"`      // the first of them
	MaxStepBackNs int64          `json:"max_step_back_ns"`     // the largest step back, ns
	WindowPackets int            `json:"window_packets"`       // reorder window, packets
	Late          int            `json:"late"`                 // beyond the window: left out of IPDs
	FirstLate     *capfile.Where `json:"first_late,omitempty"` // the first of those
}

// Input counts what was read.
type Input struct {
	Files        []string `json:"files"`
	Frames       int      `json:"frames"`
	Packets      int      `json:"packets"`                // IB/RoCE transport packets
	NotIB        int      `json:"not_ib"`                 // frames neither IB nor RoCE
	LinkPackets  int      `json:"link_packets"`           // link-level flow-control packets
	CutHeaders   int      `json:"cut_headers"`            // IB/RoCE frames cut before the end of their BTH, skipped
	DecodeErrors int      `json:"decode_errors"`          // frames that could not be decoded
	NoTime       int      `json:"no_time"`                // frames without a timestamp, skipped
	FileErrors   int      `json:"file_errors"`            // damaged files (reading stopped)
	SeenTwice    int      `json:"seen_twice"`             // second records of frames a Linux capture saw on two interfaces, counted once
	NotSelected  int      `json:"not_selected,omitempty"` // packets --select, --from, --to or -c left out
	Disorder     Disorder `json:"timestamp_order"`
}

// Input says what the stream has read so far: files, counts, disorder.
func (s *Stream) Input() Input {
	st := s.Stats()
	in := Input{Files: s.Names(), Frames: st.Frames, Packets: st.Packets, NotIB: st.NotIB, LinkPackets: st.LinkPackets, CutHeaders: st.CutHeaders,
		DecodeErrors: st.DecodeErrors, NoTime: st.NoTime, FileErrors: st.FileErrors, SeenTwice: st.SeenTwice, NotSelected: st.NotSelected,
		Disorder: Disorder{OutOfOrder: st.OutOfOrder, MaxStepBackNs: st.MaxStepBackNs, WindowPackets: s.window, Late: st.Late}}
	if st.OutOfOrder > 0 {
		w := st.FirstOutOfOrder
		in.Disorder.First = &w
	}
	if st.Late > 0 {
		w := st.FirstLate
		in.Disorder.FirstLate = &w
	}
	return in
}
