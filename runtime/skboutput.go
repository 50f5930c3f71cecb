package runtime

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/cilium/ebpf/perf"

	"github.com/gotrace/gotrace/compiler"
	"github.com/gotrace/gotrace/lang"
	"github.com/gotrace/gotrace/stdlib"
)

// skboutput(path, skb, len, offset) (bpftrace 0.26) writes packets to pcap
// files: the program appends each packet to a perf event array
// (stdlib.MapSkbOutput) behind a header (stdlib.SkbOutputHeaderSize); a
// reader here writes it, from offset, to the call's file, as bpftrace
// does: classic pcap, LINKTYPE_RAW, snaplen 65535, microsecond timestamps
// of the wall-clock time the packet was captured (boot time + the
// header's bpf_ktime_get_boot_ns).

// Pcap link type and snapshot length of skboutput's files (libpcap's
// pcap_open_dead(DLT_RAW, 65535), whose DLT_RAW is LINKTYPE_RAW in files).
const (
	pcapLinkTypeRaw = 101
	pcapSnapLen     = 65535
)

// pcapWriter writes one pcap file.
type pcapWriter struct {
	f *os.File
	w *bufio.Writer
}

// createPcap creates (truncates) path and writes the pcap file header.
func createPcap(path string) (*pcapWriter, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	p := &pcapWriter{f: f, w: bufio.NewWriter(f)}
	var h [24]byte
	binary.LittleEndian.PutUint32(h[0:], 0xa1b2c3d4) // microsecond timestamps
	binary.LittleEndian.PutUint16(h[4:], 2)
	binary.LittleEndian.PutUint16(h[6:], 4)
	// thiszone and sigfigs are 0.
	binary.LittleEndian.PutUint32(h[16:], pcapSnapLen)
	binary.LittleEndian.PutUint32(h[20:], pcapLinkTypeRaw)
	if _, err := p.w.Write(h[:]); err != nil {
		f.Close()
		return nil, err
	}
	return p, nil
}

// packet writes one record.
func (p *pcapWriter) packet(ts time.Time, data []byte) error {
	var h [16]byte
	binary.LittleEndian.PutUint32(h[0:], uint32(ts.Unix()))
	binary.LittleEndian.PutUint32(h[4:], uint32(ts.Nanosecond()/1000))
	binary.LittleEndian.PutUint32(h[8:], uint32(len(data)))
	binary.LittleEndian.PutUint32(h[12:], uint32(len(data)))
	if _, err := p.w.Write(h[:]); err != nil {
		return err
	}
	_, err := p.w.Write(data)
	return err
}

func (p *pcapWriter) close() error {
	err := p.w.Flush()
	if cerr := p.f.Close(); err == nil {
		err = cerr
	}
	return err
}

// skbOutput is the running reader of a script's skboutput() packets.
type skbOutput struct {
	rd      *perf.Reader
	files   map[int]*pcapWriter // by event ID
	byPath  map[string]*pcapWriter
	boot    time.Time
	done    chan struct{}
	mu      sync.Mutex
	lastErr error
}

// startSkbOutput creates the pcap files of the script's skboutput() calls
// and starts reading their packets; nil if the script has none. stop
// reads what is left and closes the files.
func startSkbOutput(l *Loaded) (*skbOutput, error) {
	m := l.Maps[stdlib.MapSkbOutput]
	if m == nil {
		return nil, nil
	}
	o := &skbOutput{files: map[int]*pcapWriter{}, byPath: map[string]*pcapWriter{}, boot: bootTime(), done: make(chan struct{})}
	for _, ev := range l.Spec.Events {
		if ev.Kind != compiler.EventKind(stdlib.EvSkbOutput) {
			continue
		}
		w := o.byPath[ev.Format]
		if w == nil {
			var err error
			if w, err = createPcap(ev.Format); err != nil {
				o.closeFiles()
				return nil, fmt.Errorf("skboutput: %w", err)
			}
			o.byPath[ev.Format] = w
		}
		o.files[ev.ID] = w
	}
	rd, err := perf.NewReader(m, 64*os.Getpagesize())
	if err != nil {
		o.closeFiles()
		return nil, fmt.Errorf("skboutput: open the perf buffer: %w", err)
	}
	o.rd = rd
	go o.loop()
	return o, nil
}

func (o *skbOutput) loop() {
	defer close(o.done)
	var rec perf.Record
	for {
		if err := o.rd.ReadInto(&rec); err != nil {
			if !errors.Is(err, perf.ErrClosed) && !errors.Is(err, perf.ErrFlushed) {
				o.setErr(err)
			}
			return
		}
		if err := o.record(rec.RawSample); err != nil {
			o.setErr(err)
		}
	}
}

func (o *skbOutput) setErr(err error) {
	o.mu.Lock()
	if o.lastErr == nil {
		o.lastErr = err
	}
	o.mu.Unlock()
}

// record writes one packet: header, then the packet bytes (and the
// kernel's padding, which the header's length cuts off).
func (o *skbOutput) record(raw []byte) error {
	if len(raw) < stdlib.SkbOutputHeaderSize {
		return nil
	}
	id := int(binary.NativeEndian.Uint64(raw[0:]))
	ns := binary.NativeEndian.Uint64(raw[8:])
	n := binary.NativeEndian.Uint64(raw[16:])
	off := binary.NativeEndian.Uint64(raw[24:])
	pkt := raw[stdlib.SkbOutputHeaderSize:]
	if n < uint64(len(pkt)) {
		pkt = pkt[:n]
	}
	w := o.files[id]
	if w == nil || off >= uint64(len(pkt)) {
		return nil // nothing to write, as bpftrace
	}
	return w.packet(o.boot.Add(time.Duration(ns)), pkt[off:])
}

// stop reads the packets still buffered, then closes the reader and the
// files.
func (o *skbOutput) stop() error {
	if o == nil {
		return nil
	}
	// The reader returns what the probes wrote, then ErrFlushed.
	o.rd.Flush()
	<-o.done
	o.rd.Close()
	err := o.closeFiles()
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.lastErr != nil {
		return fmt.Errorf("skboutput: %w", o.lastErr)
	}
	return err
}

func (o *skbOutput) closeFiles() error {
	var err error
	for _, w := range o.byPath {
		if cerr := w.close(); cerr != nil && err == nil {
			err = cerr
		}
	}
	return err
}

// tpBTFError is the load error of a rawtracepoint clause the compiler made
// a tp_btf program (a helper only TRACING programs may call: skboutput,
// socket_cookie): the kernel lacks BTF, the btf_trace_NAME type, or
// BPF_TRACE_RAW_TP.
func tpBTFError(spec *compiler.Spec, p *compiler.Program, err error) error {
	var ap *lang.AttachPoint
	name := "rawtracepoint:" + p.AttachTo
	if len(p.Attach) > 0 {
		ap = p.Attach[0]
		name = apName(ap)
	}
	return &ProbeError{Src: spec.Source, AP: ap, Err: fmt.Errorf("%s: this kernel cannot load it as tp_btf (a BTF-typed raw tracepoint, which skboutput() and socket_cookie() need): %w", name, err)}
}
