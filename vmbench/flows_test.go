package vmbench

import (
	"encoding/json"
	"fmt"
)

// flowJSON is what the bench reads of `ibanalyze flows --json`.
type flowJSON struct {
	Key struct {
		Src, Dst string
		DestQP   uint32 `json:"dest_qp"`
	} `json:"key"`
	Packets  uint64 `json:"packets"`
	Messages struct {
		Total, Resent uint64
	} `json:"messages"`
	PSN  psnJSON `json:"psn"`
	NAKs []struct {
		Name  string
		Count uint64
	} `json:"naks"`
}

type psnJSON struct {
	Gaps, Missing, Duplicates uint64
	OutOfOrder                uint64 `json:"out_of_order"`
}

func parseFlows(out []byte) ([]flowJSON, error) {
	var v struct{ Flows []flowJSON }
	if err := json.Unmarshal(out, &v); err != nil {
		return nil, fmt.Errorf("flows --json: %w", err)
	}
	return v.Flows, nil
}

// isRequest says whether a BTH opcode is a request (SEND, WRITE, READ
// request, atomic) rather than a response (ACK, READ response, atomic
// ACK) or a CNP.
func isRequest(op uint64) bool {
	switch op & 0x1f {
	case 13, 14, 15, 16, 17, 18:
		return false
	}
	return op != 0x81
}

// isStart says whether a request opcode begins a message (FIRST or ONLY,
// a READ request, an atomic).
func isStart(op uint64) bool {
	switch op & 0x1f {
	case 0, 4, 5, 6, 10, 11, 12, 19, 20, 22, 23:
		return true
	}
	return false
}

// psnTruth is what tshark's PSNs say of the requests from src: messages
// begun (each start PSN once), and the PSN sequence judged as flows judges
// it (ahead of the head: a gap; seen before: a duplicate; behind the head
// and new: out of order). Only for WRITE and SEND traffic: a READ request
// takes one PSN per response packet, so its sequence jumps by design.
func psnTruth(frames []tsharkFrame, src string) (messages uint64, st psnJSON) {
	type seq struct {
		head   uint64
		seen   map[uint64]bool
		starts map[uint64]bool
	}
	seqs := map[uint64]*seq{}
	for _, f := range frames {
		op, ok1 := f.num("infiniband.bth.opcode")
		qp, ok2 := f.num("infiniband.bth.destqp")
		psn, ok3 := f.num("infiniband.bth.psn")
		if !ok1 || !ok2 || !ok3 || f.src() != src || !isRequest(op) || op>>5 == 3 { // UD has no sequence
			continue
		}
		s := seqs[qp]
		if s == nil {
			s = &seq{head: psn, seen: map[uint64]bool{psn: true}, starts: map[uint64]bool{}}
			seqs[qp] = s
		} else {
			d := (psn - s.head) & 0xffffff
			switch {
			case s.seen[psn]:
				st.Duplicates++
			case d == 1:
				s.head = psn
			case d > 1 && d < 1<<23:
				st.Gaps++
				st.Missing += d - 1
				s.head = psn
			default:
				st.OutOfOrder++
			}
			s.seen[psn] = true
		}
		if isStart(op) {
			s.starts[psn] = true
		}
	}
	for _, s := range seqs {
		messages += uint64(len(s.starts))
	}
	return messages, st
}
