// Command starlark-wasm is the code-mode sandbox: go.starlark.net built as a WebAssembly reactor
// (GOOS=wasip1, -buildmode=c-shared) that the gateway runs under node:wasi in a worker thread.
//
// The host writes one JSON request into the buffer returned by `input`, calls `run`, and reads the
// JSON response from `output`. The instance stays warm between runs; each run gets a new thread and
// new globals, so nothing carries over. Tool calls leave through the `skybridge.call` import, which
// blocks (the host parks the worker on Atomics.wait) until the answer is ready; print() leaves
// through `skybridge.print`. There is no file system, network, clock or randomness in Starlark, and
// no load(): the thread has no loader.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"sort"
	"strconv"
	"strings"
	"unsafe"

	"go.starlark.net/starlark"
	"go.starlark.net/syntax"
)

//go:wasmimport skybridge call
func hostCall(ptr unsafe.Pointer, n int32) int32

//go:wasmimport skybridge take
func hostTake(ptr unsafe.Pointer)

//go:wasmimport skybridge print
func hostPrint(ptr unsafe.Pointer, n int32)

func main() {}

// Buffers shared with the host; kept in globals so the collector does not free them mid-exchange.
var inbuf, outbuf []byte

//go:wasmexport input
func input(n int32) uint32 {
	inbuf = make([]byte, n+1)
	return uint32(uintptr(unsafe.Pointer(&inbuf[0])))
}

//go:wasmexport run
func run(n int32) int32 {
	req := inbuf[:n]
	inbuf = nil
	outbuf = execute(req)
	return int32(len(outbuf))
}

//go:wasmexport output
func output() uint32 {
	if len(outbuf) == 0 {
		return 0
	}
	return uint32(uintptr(unsafe.Pointer(&outbuf[0])))
}

type toolSpec struct {
	Attr string `json:"attr"`
	Tool string `json:"tool"`
}

type serverSpec struct {
	Global string     `json:"global"`
	Server string     `json:"server"`
	Tools  []toolSpec `json:"tools"`
}

type request struct {
	Code           string       `json:"code"`
	Servers        []serverSpec `json:"servers"`
	MaxSteps       uint64       `json:"maxSteps"`
	MaxToolCalls   int          `json:"maxToolCalls"`
	MaxOutputBytes int          `json:"maxOutputBytes"`
}

type response struct {
	Result    *string `json:"result,omitempty"` // JSON text of the result global
	Error     string  `json:"error,omitempty"`
	Steps     uint64  `json:"steps"`
	ToolCalls int     `json:"toolCalls"`
}

// run state for one execution
type session struct {
	req        *request
	toolCalls  int
	printBytes int
	truncated  bool
}

var fileOptions = &syntax.FileOptions{
	Set:             true,
	While:           true, // bounded by the step budget
	TopLevelControl: true,
	GlobalReassign:  true,
	// Recursion stays off: deep recursion would grow the Go stack rather than count steps.
}

func execute(raw []byte) []byte {
	var req request
	if err := json.Unmarshal(raw, &req); err != nil {
		return encode(response{Error: "bad request: " + err.Error()})
	}
	s := &session{req: &req}
	thread := &starlark.Thread{Name: "executeToolCode", Print: s.print}
	if req.MaxSteps > 0 {
		thread.SetMaxExecutionSteps(req.MaxSteps)
	}
	predeclared := starlark.StringDict{}
	names := make([]string, 0, len(req.Servers))
	for i := range req.Servers {
		spec := &req.Servers[i]
		predeclared[spec.Global] = s.newServer(spec)
		names = append(names, spec.Global)
	}
	sort.Strings(names)

	globals, err := starlark.ExecFileOptions(fileOptions, thread, "code.star", req.Code, predeclared)
	resp := response{Steps: thread.ExecutionSteps(), ToolCalls: s.toolCalls}
	if err != nil {
		resp.Error = describe(err, names)
		return encode(resp)
	}
	value, ok := globals["result"]
	if !ok {
		value = starlark.None
	}
	var buf bytes.Buffer
	if err := toJSON(&buf, value, 0); err != nil {
		resp.Error = "result: " + err.Error()
		return encode(resp)
	}
	if req.MaxOutputBytes > 0 && buf.Len() > req.MaxOutputBytes {
		resp.Error = fmt.Sprintf("result is %d bytes of JSON, over the %d-byte limit; return less (for example a summary or a slice)", buf.Len(), req.MaxOutputBytes)
		return encode(resp)
	}
	text := buf.String()
	resp.Result = &text
	return encode(resp)
}

func encode(r response) []byte {
	out, err := json.Marshal(r)
	if err != nil {
		out, _ = json.Marshal(response{Error: "internal: " + err.Error()})
	}
	return out
}

// describe turns an error into text for the model: the Starlark backtrace, plus the available servers
// when a name is undefined (rule 6).
func describe(err error, servers []string) string {
	var text string
	var evalErr *starlark.EvalError
	if errors.As(err, &evalErr) {
		text = evalErr.Backtrace()
	} else {
		text = err.Error()
	}
	if strings.Contains(text, "undefined: ") {
		if len(servers) == 0 {
			text += "\nNo servers are available."
		} else {
			text += "\nAvailable servers: " + strings.Join(servers, ", ")
		}
	}
	if strings.Contains(text, "got import") || strings.Contains(text, "got from") {
		text += "\nImports are not available: the servers are already global objects."
	}
	return text
}

func (s *session) print(_ *starlark.Thread, msg string) {
	if s.truncated {
		return
	}
	limit := s.req.MaxOutputBytes
	if limit > 0 && s.printBytes+len(msg) > limit {
		msg = fmt.Sprintf("[print output truncated at %d bytes]", limit)
		s.truncated = true
	}
	s.printBytes += len(msg)
	if len(msg) == 0 {
		hostPrint(nil, 0)
		return
	}
	b := []byte(msg)
	hostPrint(unsafe.Pointer(&b[0]), int32(len(b)))
}

// server is the global object of one code-mode client: its attributes are the tool bindings.
type server struct {
	spec  *serverSpec
	tools map[string]*starlark.Builtin
	names []string
}

func (s *session) newServer(spec *serverSpec) *server {
	srv := &server{spec: spec, tools: make(map[string]*starlark.Builtin, len(spec.Tools))}
	for _, t := range spec.Tools {
		tool := t.Tool
		srv.tools[t.Attr] = starlark.NewBuiltin(spec.Global+"."+t.Attr, func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			return s.call(b.Name(), spec.Server, tool, args, kwargs)
		})
		srv.names = append(srv.names, t.Attr)
	}
	sort.Strings(srv.names)
	return srv
}

func (v *server) String() string        { return "<server " + v.spec.Global + ">" }
func (v *server) Type() string          { return "server" }
func (v *server) Freeze()               {}
func (v *server) Truth() starlark.Bool  { return starlark.True }
func (v *server) Hash() (uint32, error) { return 0, errors.New("unhashable: server") }
func (v *server) AttrNames() []string   { return v.names }
func (v *server) Attr(name string) (starlark.Value, error) {
	if b, ok := v.tools[name]; ok {
		return b, nil
	}
	return nil, starlark.NoSuchAttrError(fmt.Sprintf("server %s has no tool %q; its tools: %s", v.spec.Global, name, strings.Join(v.names, ", ")))
}

// call sends one tool call to the host and blocks for the answer. The host checks the allow-lists
// for every call, so how the binding was reached (alias, getattr) does not matter.
func (s *session) call(display, srv, tool string, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if len(args) > 0 {
		return nil, fmt.Errorf("keyword arguments only, e.g. %s(name=value)", display)
	}
	if max := s.req.MaxToolCalls; max > 0 && s.toolCalls >= max {
		return nil, fmt.Errorf("over the limit of %d tool calls per execution", max)
	}
	s.toolCalls++
	var buf bytes.Buffer
	buf.WriteString(`{"server":`)
	writeString(&buf, srv)
	buf.WriteString(`,"tool":`)
	writeString(&buf, tool)
	buf.WriteString(`,"args":{`)
	for i, kv := range kwargs {
		if i > 0 {
			buf.WriteByte(',')
		}
		writeString(&buf, string(kv[0].(starlark.String)))
		buf.WriteByte(':')
		if err := toJSON(&buf, kv[1], 0); err != nil {
			return nil, fmt.Errorf("argument %s: %v", kv[0].(starlark.String), err)
		}
	}
	buf.WriteString(`}}`)
	msg := buf.Bytes()
	n := hostCall(unsafe.Pointer(&msg[0]), int32(len(msg)))
	answer := make([]byte, n+1)
	hostTake(unsafe.Pointer(&answer[0]))
	answer = answer[:n]

	var reply struct {
		OK    json.RawMessage `json:"ok"`
		Error *string         `json:"error"`
	}
	if err := json.Unmarshal(answer, &reply); err != nil {
		return nil, fmt.Errorf("bad answer from the gateway: %v", err)
	}
	if reply.Error != nil {
		return nil, errors.New(*reply.Error)
	}
	if len(reply.OK) == 0 {
		return starlark.None, nil
	}
	value, err := decodeJSON(reply.OK)
	if err != nil {
		return nil, fmt.Errorf("bad answer from the gateway: %v", err)
	}
	return value, nil
}

func writeString(buf *bytes.Buffer, s string) {
	b, _ := json.Marshal(s)
	buf.Write(b)
}

const maxDepth = 100

// toJSON writes a Starlark value as JSON; only data (None, bool, numbers, strings, lists, tuples,
// dicts with string keys, sets) converts.
func toJSON(buf *bytes.Buffer, v starlark.Value, depth int) error {
	if depth > maxDepth {
		return fmt.Errorf("nested more than %d levels deep (a list or dict that contains itself?)", maxDepth)
	}
	switch x := v.(type) {
	case starlark.NoneType:
		buf.WriteString("null")
	case starlark.Bool:
		if x {
			buf.WriteString("true")
		} else {
			buf.WriteString("false")
		}
	case starlark.Int:
		buf.WriteString(x.String())
	case starlark.Float:
		f := float64(x)
		if math.IsInf(f, 0) || math.IsNaN(f) {
			return fmt.Errorf("cannot encode %s as JSON", x.String())
		}
		buf.WriteString(strconv.FormatFloat(f, 'g', -1, 64))
	case starlark.String:
		writeString(buf, string(x))
	case starlark.Indexable: // list, tuple
		buf.WriteByte('[')
		for i := 0; i < x.Len(); i++ {
			if i > 0 {
				buf.WriteByte(',')
			}
			if err := toJSON(buf, x.Index(i), depth+1); err != nil {
				return err
			}
		}
		buf.WriteByte(']')
	case *starlark.Dict:
		buf.WriteByte('{')
		for i, item := range x.Items() {
			key, ok := item[0].(starlark.String)
			if !ok {
				return fmt.Errorf("dict key %s is a %s; JSON object keys must be strings", item[0].String(), item[0].Type())
			}
			if i > 0 {
				buf.WriteByte(',')
			}
			writeString(buf, string(key))
			buf.WriteByte(':')
			if err := toJSON(buf, item[1], depth+1); err != nil {
				return err
			}
		}
		buf.WriteByte('}')
	case *starlark.Set:
		buf.WriteByte('[')
		iter := x.Iterate()
		defer iter.Done()
		var elem starlark.Value
		for i := 0; iter.Next(&elem); i++ {
			if i > 0 {
				buf.WriteByte(',')
			}
			if err := toJSON(buf, elem, depth+1); err != nil {
				return err
			}
		}
		buf.WriteByte(']')
	default:
		return fmt.Errorf("cannot encode a %s as JSON", v.Type())
	}
	return nil
}

// decodeJSON turns JSON into Starlark values (objects become dicts, keeping the key order).
func decodeJSON(data []byte) (starlark.Value, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	return decodeValue(dec)
}

func decodeValue(dec *json.Decoder) (starlark.Value, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch x := tok.(type) {
	case nil:
		return starlark.None, nil
	case bool:
		return starlark.Bool(x), nil
	case json.Number:
		if i, err := strconv.ParseInt(string(x), 10, 64); err == nil {
			return starlark.MakeInt64(i), nil
		}
		if b, ok := new(big.Int).SetString(string(x), 10); ok {
			return starlark.MakeBigInt(b), nil
		}
		f, err := strconv.ParseFloat(string(x), 64)
		return starlark.Float(f), err
	case string:
		return starlark.String(x), nil
	case json.Delim:
		if x == '[' {
			var elems []starlark.Value
			for dec.More() {
				e, err := decodeValue(dec)
				if err != nil {
					return nil, err
				}
				elems = append(elems, e)
			}
			_, err := dec.Token()
			return starlark.NewList(elems), err
		}
		d := starlark.NewDict(0)
		for dec.More() {
			k, err := dec.Token()
			if err != nil {
				return nil, err
			}
			v, err := decodeValue(dec)
			if err != nil {
				return nil, err
			}
			_ = d.SetKey(starlark.String(k.(string)), v)
		}
		_, err := dec.Token()
		return d, err
	}
	return nil, fmt.Errorf("unexpected JSON token %v", tok)
}
