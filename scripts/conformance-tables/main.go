// Extracts the request/expected-response tables of the upstream Gateway API conformance tests
// (sigs.k8s.io/gateway-api/conformance, tests/*.go) as JSON, so the route-table check can run
// every request they send against the Envoy config Turnpike generates. It reads the Go source
// with go/ast and evaluates the literals and simple expressions the tests build their cases
// from; a value it cannot evaluate is kept as {"unresolved": "<source>"} so the consumer can
// count it rather than guess.
//
// Usage: go run . <conformance module dir> <out dir> [<gateway-api module dir>]
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/printer"
	"go/token"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

type value = any

// recorded calls: package-qualified names of the functions that send traffic or check weights.
var recorded = map[string]bool{
	"http.MakeRequestAndExpectEventuallyConsistentResponse":       true,
	"grpc.MakeRequestAndExpectEventuallyConsistentResponse":       true,
	"tls.MakeTLSRequestAndExpectEventuallyConsistentResponse":     true,
	"tls.MakeTLSConnectionAndExpectEventuallyConnectionRejection": true,
	"tls.MakeTLSRequestAndExpectFailureResponse":                  true,
	// v1.7.0: the eventually-consistent failure expectations (the tls one replaces ...ExpectFailureResponse).
	"tls.MakeTLSRequestAndExpectEventuallyConsistentFailureResponse": true,
	"grpc.MakeRequestAndExpectEventuallyConsistentFailure":           true,
	"http.MakeRequestAndExpectFailure":                               true,
	"tcp.MakeTCPRequestAndExpectEventuallyValidResponse":             true,
	"weight.TestWeightedDistribution":                                true,
	"udp.ExpectEchoResponseFromBackend":                              true,
	"udp.ExpectEchoResponse":                                         true,
	"http.ExpectMirroredRequest":                                     true,
	"http.MakeRequest":                                               true,
}

// Calls that return a Gateway's address: their NewGatewayRef argument says which Gateway and listener.
func gatewayAddressCall(name string) bool {
	return strings.HasPrefix(name, "kubernetes.Gateway") && strings.HasSuffix(name, "MustBeAccepted") ||
		name == "kubernetes.WaitForGatewayAddress" || name == "kubernetes.GatewayAndUDPRoutesMustBeAccepted"
}

var consts = map[string]value{}
var fset = token.NewFileSet()

type env struct {
	vars   map[string]value
	parent *env
}

func (e *env) get(n string) (value, bool) {
	for c := e; c != nil; c = c.parent {
		if v, ok := c.vars[n]; ok {
			return v, true
		}
	}
	return nil, false
}
func (e *env) set(n string, v value) {
	for c := e; c != nil; c = c.parent {
		if _, ok := c.vars[n]; ok {
			c.vars[n] = v
			return
		}
	}
	e.vars[n] = v
}
func child(e *env) *env { return &env{vars: map[string]value{}, parent: e} }

func src(n ast.Node) string {
	var b bytes.Buffer
	printer.Fprint(&b, fset, n)
	return b.String()
}

func unresolved(n ast.Node) value { return map[string]value{"unresolved": src(n)} }

func isUnresolved(v value) bool {
	m, ok := v.(map[string]value)
	if !ok {
		return false
	}
	_, u := m["unresolved"]
	return u
}

// aliases maps the names the current file imports the conformance utils packages under (`h` for
// utils/http, `suite` for utils/suite) to the names used here (`http`, `confsuite`).
var aliases = map[string]string{}

func importAliases(file *ast.File) map[string]string {
	m := map[string]string{}
	for _, imp := range file.Imports {
		path, _ := strconv.Unquote(imp.Path.Value)
		if !strings.HasPrefix(path, "sigs.k8s.io/gateway-api/conformance/utils/") {
			continue
		}
		name := filepath.Base(path)
		canonical := name
		if canonical == "suite" {
			canonical = "confsuite"
		}
		if imp.Name != nil {
			name = imp.Name.Name
		}
		if name != canonical {
			m[name] = canonical
		}
	}
	return m
}

func qualified(fun ast.Expr) string {
	if s, ok := fun.(*ast.SelectorExpr); ok {
		if x, ok := s.X.(*ast.Ident); ok {
			if c, ok := aliases[x.Name]; ok {
				return c + "." + s.Sel.Name
			}
			return x.Name + "." + s.Sel.Name
		}
		return "?." + s.Sel.Name
	}
	if i, ok := fun.(*ast.Ident); ok {
		return i.Name
	}
	return "?"
}

func typeName(t ast.Expr) string {
	if t == nil {
		return ""
	}
	switch x := t.(type) {
	case *ast.ArrayType:
		return "[]" + typeName(x.Elt)
	case *ast.StarExpr:
		return typeName(x.X)
	case *ast.MapType:
		return "map"
	case *ast.StructType:
		return "struct"
	}
	return qualified(t)
}

var httpConsts = map[string]value{
	"http.MethodGet": "GET", "http.MethodPost": "POST", "http.MethodPut": "PUT", "http.MethodDelete": "DELETE",
	"http.MethodHead": "HEAD", "http.MethodOptions": "OPTIONS", "http.MethodPatch": "PATCH",
	"http.MethodConnect": "CONNECT", "http.MethodTrace": "TRACE",
}

func eval(e ast.Expr, en *env) value {
	switch x := e.(type) {
	case *ast.BasicLit:
		switch x.Kind {
		case token.STRING:
			s, _ := strconv.Unquote(x.Value)
			return s
		case token.INT:
			n, _ := strconv.ParseInt(x.Value, 0, 64)
			return float64(n)
		case token.FLOAT:
			f, _ := strconv.ParseFloat(x.Value, 64)
			return f
		}
	case *ast.ParenExpr:
		return eval(x.X, en)
	case *ast.Ident:
		switch x.Name {
		case "true":
			return true
		case "false":
			return false
		case "nil":
			return nil
		}
		if v, ok := en.get(x.Name); ok {
			return v
		}
	case *ast.SelectorExpr:
		q := qualified(x)
		if v, ok := consts[q]; ok {
			return v
		}
		if v, ok := httpConsts[q]; ok {
			return v
		}
		if strings.HasPrefix(q, "roundtripper.") {
			return q // a protocol name (H2Protocol, H2CPriorKnowledgeProtocol): kept as named
		}
		if strings.HasPrefix(q, "codes.") {
			return strings.TrimPrefix(q, "codes.")
		}
		if strings.HasPrefix(q, "nethttp.Status") || strings.HasPrefix(q, "http.Status") {
			if code, ok := statusCodes[q[strings.Index(q, ".")+1:]]; ok {
				return code
			}
		}
		base := eval(x.X, en)
		if m, ok := base.(map[string]value); ok && !isUnresolved(m) {
			if v, ok := m[x.Sel.Name]; ok {
				return v
			}
			return nil // a struct field left at its zero value
		}
	case *ast.UnaryExpr:
		if x.Op == token.AND {
			return eval(x.X, en)
		}
		if x.Op == token.SUB {
			if f, ok := eval(x.X, en).(float64); ok {
				return -f
			}
		}
	case *ast.BinaryExpr:
		if x.Op == token.ADD {
			l, r := eval(x.X, en), eval(x.Y, en)
			if ls, ok := l.(string); ok {
				if rs, ok := r.(string); ok {
					return ls + rs
				}
			}
			if lf, ok := l.(float64); ok {
				if rf, ok := r.(float64); ok {
					return lf + rf
				}
			}
		}
	case *ast.IndexExpr:
		base := eval(x.X, en)
		if list, ok := base.([]value); ok {
			if i, ok := eval(x.Index, en).(float64); ok && int(i) < len(list) {
				return list[int(i)]
			}
		}
		if m, ok := base.(map[string]value); ok && m["routeHostnames"] != nil {
			return map[string]value{"routeHostnames": m["routeHostnames"], "index": eval(x.Index, en)}
		}
		if m, ok := base.(map[string]value); ok && !isUnresolved(m) {
			if k, ok := eval(x.Index, en).(string); ok {
				return m[k]
			}
		}
	case *ast.CompositeLit:
		return composite(x, en)
	case *ast.FuncLit:
		return closure{fn: x}
	case *ast.CallExpr:
		return call(x, en)
	}
	return unresolved(e)
}

// closure is a function literal bound to a variable; calling it walks its body.
type closure struct{ fn *ast.FuncLit }

var conversions = map[string]bool{
	"int": true, "int32": true, "int64": true, "uint32": true, "float64": true, "[]byte": true,
}

var statusCodes = map[string]value{
	"StatusOK": 200.0, "StatusFound": 302.0, "StatusMovedPermanently": 301.0, "StatusNotFound": 404.0,
	"StatusInternalServerError": 500.0, "StatusServiceUnavailable": 503.0, "StatusMisdirectedRequest": 421.0,
	"StatusNoContent": 204.0, "StatusForbidden": 403.0, "StatusGatewayTimeout": 504.0, "StatusBadGateway": 502.0,
	"StatusSeeOther": 303.0, "StatusTemporaryRedirect": 307.0, "StatusPermanentRedirect": 308.0,
}

func composite(x *ast.CompositeLit, en *env) value {
	t := typeName(x.Type)
	if strings.HasPrefix(t, "[]") {
		list := []value{}
		for _, el := range x.Elts {
			if cl, ok := el.(*ast.CompositeLit); ok && cl.Type == nil {
				cl.Type = x.Type.(*ast.ArrayType).Elt
			}
			if u, ok := el.(*ast.UnaryExpr); ok && u.Op == token.AND {
				if cl, ok := u.X.(*ast.CompositeLit); ok && cl.Type == nil {
					cl.Type = x.Type.(*ast.ArrayType).Elt
				}
			}
			list = append(list, eval(el, en))
		}
		return list
	}
	m := map[string]value{}
	if t == "map" || t == "url.Values" {
		var elt ast.Expr
		if mt, ok := x.Type.(*ast.MapType); ok {
			elt = mt.Value
		}
		for _, el := range x.Elts {
			kv := el.(*ast.KeyValueExpr)
			if cl, ok := kv.Value.(*ast.CompositeLit); ok && cl.Type == nil && elt != nil {
				cl.Type = elt
			}
			k := eval(kv.Key, en)
			ks, ok := k.(string)
			if !ok {
				ks = fmt.Sprint(k)
			}
			m[ks] = eval(kv.Value, en)
		}
		return m
	}
	if t != "struct" {
		m["_type"] = t
	}
	var fields []string
	if st, ok := x.Type.(*ast.StructType); ok {
		for _, f := range st.Fields.List {
			for _, n := range f.Names {
				fields = append(fields, n.Name)
			}
		}
	}
	for i, el := range x.Elts {
		if kv, ok := el.(*ast.KeyValueExpr); ok {
			id, ok := kv.Key.(*ast.Ident)
			if !ok {
				// A map of a named type (metadata.MD{"k": ...}): its keys are values.
				m[fmt.Sprint(eval(kv.Key, en))] = eval(kv.Value, en)
				continue
			}
			key := id.Name
			if embedded, typ, ok := promotedFrom(t, key); ok {
				// Go 1.27 lets a literal name an embedded struct's fields directly; they are kept
				// nested as the older literals wrote them, so the tables read the same.
				inner, _ := m[embedded].(map[string]value)
				if inner == nil {
					inner = map[string]value{"_type": typ}
					m[embedded] = inner
				}
				inner[key] = eval(kv.Value, en)
				continue
			}
			m[key] = eval(kv.Value, en)
		} else if i < len(fields) {
			m[fields[i]] = eval(el, en)
		}
	}
	return m
}

// The embedded structs whose fields the tests' literals name directly.
var (
	requestFields = fieldSet("Host", "Method", "Path", "Headers", "UnfollowRedirect", "Protocol", "Body", "SNI",
		"ClientCert")
	objectMetaFields = fieldSet("Name", "Namespace", "GenerateName", "Labels", "Annotations", "Finalizers",
		"OwnerReferences", "ResourceVersion", "Generation", "UID")
	typeMetaFields = fieldSet("Kind", "APIVersion")
	// Kubernetes objects (they embed ObjectMeta and TypeMeta) as the tests build them.
	objectKinds = fieldSet("Gateway", "GatewayClass", "HTTPRoute", "GRPCRoute", "TLSRoute", "TCPRoute", "UDPRoute",
		"ReferenceGrant", "BackendTLSPolicy", "ListenerSet", "XListenerSet", "Service", "ConfigMap", "Secret",
		"Namespace", "Pod", "Deployment", "EndpointSlice", "ConformanceReport")
)

// The conformance utils packages, by the names qualified() gives them: none of their types is an object.
var utilsPackages = fieldSet("confsuite", "http", "grpc", "tls", "tcp", "udp", "weight", "kubernetes", "roundtripper")

func fieldSet(names ...string) map[string]bool {
	m := map[string]bool{}
	for _, n := range names {
		m[n] = true
	}
	return m
}

// promotedFrom names the embedded field (and its type) that field belongs to in a literal of type t.
func promotedFrom(t, field string) (string, string, bool) {
	switch {
	case t == "http.ExpectedRequest" && requestFields[field]:
		return "Request", "http.Request", true
	case t == "http.MirroredBackend" && (field == "Name" || field == "Namespace"):
		return "BackendRef", "http.BackendRef", true
	}
	if dot := strings.LastIndex(t, "."); dot >= 0 && objectKinds[t[dot+1:]] && !utilsPackages[t[:dot]] {
		if objectMetaFields[field] {
			return "ObjectMeta", "metav1.ObjectMeta", true
		}
		if typeMetaFields[field] {
			return "TypeMeta", "metav1.TypeMeta", true
		}
	}
	return "", "", false
}

func call(x *ast.CallExpr, en *env) value {
	if _, ok := x.Fun.(*ast.ArrayType); ok && len(x.Args) == 1 {
		return eval(x.Args[0], en)
	}
	name := qualified(x.Fun)
	switch {
	case name == "string" || name == "ptr.To" || name == "v1.Hostname" || name == "gatewayv1.Hostname" ||
		name == "v1.SectionName" || name == "gatewayv1.SectionName" || name == "ptrTo":
		if len(x.Args) == 1 {
			return eval(x.Args[0], en)
		}
	case (conversions[name] || name == "new" || strings.HasPrefix(name, "v1.") || strings.HasPrefix(name, "gatewayv1.")) &&
		len(x.Args) == 1:
		return eval(x.Args[0], en)
	case name == "append" && len(x.Args) >= 1:
		list, ok := eval(x.Args[0], en).([]value)
		if !ok {
			break
		}
		out := append([]value{}, list...)
		for i, a := range x.Args[1:] {
			v := eval(a, en)
			if more, ok := v.([]value); ok && x.Ellipsis.IsValid() && i == len(x.Args)-2 {
				out = append(out, more...)
			} else {
				out = append(out, v)
			}
		}
		return out
	case name == "strings.Split" && len(x.Args) == 2:
		if str, ok := eval(x.Args[0], en).(string); ok {
			if sep, ok := eval(x.Args[1], en).(string); ok {
				out := []value{}
				for _, part := range strings.Split(str, sep) {
					out = append(out, part)
				}
				return out
			}
		}
	case name == "len" && len(x.Args) == 1:
		switch v := eval(x.Args[0], en).(type) {
		case []value:
			return float64(len(v))
		case string:
			return float64(len(v))
		}
	case name == "net.SplitHostPort" && len(x.Args) == 1:
		return eval(x.Args[0], en)
	case name == "net.JoinHostPort" && len(x.Args) == 2:
		if m, ok := eval(x.Args[0], en).(map[string]value); ok && m["gatewayAddress"] != nil {
			return map[string]value{"gatewayAddress": m["gatewayAddress"], "port": eval(x.Args[1], en)}
		}
	case name == "kubernetes.NewGatewayRef":
		ref := map[string]value{"gateway": eval(x.Args[0], en)}
		if len(x.Args) > 1 {
			ref["listener"] = eval(x.Args[1], en)
		}
		return map[string]value{"gatewayRef": ref}
	case gatewayAddressCall(name):
		for _, a := range x.Args {
			if v, ok := eval(a, en).(map[string]value); ok {
				if ref, ok := v["gatewayRef"]; ok {
					return map[string]value{"gatewayAddress": ref}
				}
			}
		}
	case name == "kubernetes.GetTLSSecret" && len(x.Args) == 2:
		// The certificate of a Secret the suite created: named, as its content is made at run time.
		return map[string]value{"tlsSecretCert": eval(x.Args[1], en)}
	case name == "fmt.Sprintf":
		format, ok := eval(x.Args[0], en).(string)
		if ok {
			args := []any{}
			for _, a := range x.Args[1:] {
				v := eval(a, en)
				if f, ok := v.(float64); ok && f == float64(int64(f)) {
					v = int64(f)
				}
				args = append(args, v)
			}
			return fmt.Sprintf(format, args...)
		}
	}
	if s, ok := x.Fun.(*ast.SelectorExpr); ok && s.Sel.Name == "Encode" {
		if m, ok := eval(s.X, en).(map[string]value); ok && !isUnresolved(m) {
			q := url.Values{}
			for k, v := range m {
				if list, ok := v.([]value); ok {
					for _, e := range list {
						q.Add(k, fmt.Sprint(e))
					}
				}
			}
			return q.Encode()
		}
	}
	return unresolved(x)
}

type recordedCall struct {
	Function string  `json:"function"`
	Gateway  value   `json:"gateway,omitempty"`
	Args     []value `json:"args"`
	Line     int     `json:"line"`
	Subtest  string  `json:"subtest,omitempty"`
}

// helper is a package-level function of the tests, with the import names of its file.
type helper struct {
	fn      *ast.FuncDecl
	aliases map[string]string
}

type walker struct {
	// the file's own functions, walked where a test calls them with its arguments bound
	funcs   map[string]helper
	depth   int
	calls   []recordedCall
	lastGw  value
	subtest []string
}

// record keeps one call that sends traffic, its arguments evaluated.
func (w *walker) record(c *ast.CallExpr, en *env) {
	args := []value{}
	var gw value
	for _, a := range c.Args[1:] {
		v := eval(a, en)
		if m, ok := v.(map[string]value); ok && m["gatewayAddress"] != nil {
			gw = m["gatewayAddress"]
		}
		args = append(args, v)
	}
	if gw == nil {
		gw = w.lastGw
	}
	w.calls = append(w.calls, recordedCall{Function: qualified(c.Fun), Gateway: gw, Args: args,
		Line: fset.Position(c.Pos()).Line, Subtest: strings.Join(w.subtest, "/")})
}

func (w *walker) assign(lhs []ast.Expr, rhs []ast.Expr, en *env, define bool) {
	for i, l := range lhs {
		id, ok := l.(*ast.Ident)
		if !ok || id.Name == "_" {
			continue
		}
		var v value
		if len(rhs) == len(lhs) {
			v = eval(rhs[i], en)
		} else if len(rhs) == 1 {
			r := eval(rhs[0], en)
			if i == 0 {
				v = r
			} else if m, ok := r.(map[string]value); ok && m["gatewayAddress"] != nil {
				// GatewayAndTLSRoutesMustBeAccepted's second result: the routes' hostnames.
				// The hostnames of the routes named after the Gateway reference, in order.
				routes := []value{}
				if c, ok := rhs[0].(*ast.CallExpr); ok {
					afterRef := false
					for _, a := range c.Args {
						v := eval(a, en)
						if m, ok := v.(map[string]value); ok && m["gatewayRef"] != nil {
							afterRef = true
						} else if afterRef {
							routes = append(routes, v)
						}
					}
				}
				v = map[string]value{"routeHostnames": routes}
			} else {
				v = unresolved(rhs[0])
			}
		}
		if m, ok := v.(map[string]value); ok && m["gatewayAddress"] != nil {
			w.lastGw = m["gatewayAddress"]
		}
		if define {
			en.vars[id.Name] = v
		} else {
			en.set(id.Name, v)
		}
	}
}

// visitCalls records the traffic-sending calls in n, and walks the helpers, closures and subtests it calls.
func (w *walker) visitCalls(n ast.Node, en *env) {
	ast.Inspect(n, func(m ast.Node) bool {
		switch c := m.(type) {
		case *ast.FuncLit:
			w.block(c.Body.List, child(en))
			return false
		case *ast.CallExpr:
			name := qualified(c.Fun)
			if recorded[name] {
				w.record(c, en)
				return false
			}
			// Objects the test creates in code (a newer route) are a step of their own: created
			// with the suite's Applier, deleted when the subtest that created them ends.
			if src(c.Fun) == "suite.Applier.MustApplyObjectsWithCleanup" && len(c.Args) >= 4 {
				w.calls = append(w.calls, recordedCall{Function: "client.Apply", Gateway: w.lastGw,
					Args: []value{eval(c.Args[3], en)}, Line: fset.Position(c.Pos()).Line,
					Subtest: strings.Join(w.subtest, "/")})
				return false
			}
			// A write the test makes between requests (a deleted ReferenceGrant) is a step of its own.
			if sel, ok := c.Fun.(*ast.SelectorExpr); ok && src(sel.X) == "suite.Client" &&
				(sel.Sel.Name == "Delete" || sel.Sel.Name == "Create" || sel.Sel.Name == "Update") {
				w.record(c, en)
				w.calls[len(w.calls)-1].Function = "client." + sel.Sel.Name
				return false
			}
			if id, ok := c.Fun.(*ast.Ident); ok && w.depth < 4 {
				if cl, ok := en.get(id.Name); ok {
					if fn, ok := cl.(closure); ok {
						inner := &env{vars: map[string]value{}, parent: en}
						i := 0
						for _, f := range fn.fn.Type.Params.List {
							for _, n := range f.Names {
								if i < len(c.Args) {
									inner.vars[n.Name] = eval(c.Args[i], en)
								}
								i++
							}
						}
						w.depth++
						w.block(fn.fn.Body.List, inner)
						w.depth--
						return false
					}
				}
			}
			if h, ok := w.funcs[name]; ok && w.depth < 4 {
				fd := h.fn
				inner := &env{vars: map[string]value{}, parent: en}
				i := 0
				for _, f := range fd.Type.Params.List {
					for _, n := range f.Names {
						if i < len(c.Args) {
							inner.vars[n.Name] = eval(c.Args[i], en)
						}
						i++
					}
				}
				caller := aliases
				aliases = h.aliases
				w.depth++
				w.block(fd.Body.List, inner)
				w.depth--
				aliases = caller
				return false
			}
			if name == "t.Run" && len(c.Args) == 2 {
				title := ""
				if s, ok := eval(c.Args[0], en).(string); ok {
					title = s
				}
				w.subtest = append(w.subtest, title)
				if fl, ok := c.Args[1].(*ast.FuncLit); ok {
					w.block(fl.Body.List, child(en))
				}
				w.subtest = w.subtest[:len(w.subtest)-1]
				return false
			}
		}
		return true
	})
}

func (w *walker) block(stmts []ast.Stmt, en *env) {
	for _, s := range stmts {
		w.stmt(s, en)
	}
}

func (w *walker) stmt(s ast.Stmt, en *env) {
	switch x := s.(type) {
	case *ast.AssignStmt:
		w.assign(x.Lhs, x.Rhs, en, x.Tok == token.DEFINE)
		for _, r := range x.Rhs {
			w.visitCalls(r, en)
		}
	case *ast.DeclStmt:
		if g, ok := x.Decl.(*ast.GenDecl); ok {
			for _, sp := range g.Specs {
				if vs, ok := sp.(*ast.ValueSpec); ok {
					lhs := []ast.Expr{}
					for _, n := range vs.Names {
						lhs = append(lhs, n)
					}
					if len(vs.Values) > 0 {
						w.assign(lhs, vs.Values, en, true)
					} else {
						for _, n := range vs.Names {
							if strings.HasPrefix(typeName(vs.Type), "[]") {
								en.vars[n.Name] = []value{}
							} else {
								en.vars[n.Name] = map[string]value{}
							}
						}
					}
				}
			}
		}
	case *ast.RangeStmt:
		// A loop over a list the test built is walked once per element, with its variables bound.
		list, ok := eval(x.X, en).([]value)
		if !ok || len(list) > 500 {
			w.block(x.Body.List, child(en))
			return
		}
		for i, el := range list {
			inner := child(en)
			if k, ok := x.Key.(*ast.Ident); ok && k.Name != "_" {
				inner.vars[k.Name] = float64(i)
			}
			if v, ok := x.Value.(*ast.Ident); ok && v.Name != "_" {
				inner.vars[v.Name] = el
			}
			w.block(x.Body.List, inner)
		}
	case *ast.ForStmt:
		w.block(x.Body.List, child(en))
	case *ast.IfStmt:
		inner := child(en)
		if x.Init != nil {
			w.stmt(x.Init, inner)
		}
		w.visitCalls(x.Cond, inner)
		// A condition on values the test built decides the branch; any other runs both.
		taken, known := condition(x.Cond, inner)
		if !known || taken {
			w.block(x.Body.List, child(inner))
		}
		if x.Else != nil && (!known || !taken) {
			w.stmt(x.Else, inner)
		}
	case *ast.SwitchStmt:
		inner := child(en)
		if x.Init != nil {
			w.stmt(x.Init, inner)
		}
		tag := eval(x.Tag, inner)
		var chosen *ast.CaseClause
		for _, c := range x.Body.List {
			clause := c.(*ast.CaseClause)
			if clause.List == nil && chosen == nil {
				chosen = clause
			}
			for _, e := range clause.List {
				if v := eval(e, inner); !isUnresolved(v) && fmt.Sprint(v) == fmt.Sprint(tag) {
					chosen = clause
				}
			}
		}
		if chosen != nil {
			w.block(chosen.Body, child(inner))
		}
	case *ast.BlockStmt:
		w.block(x.List, child(en))
	case *ast.ExprStmt:
		w.visitCalls(x.X, en)
	case *ast.ReturnStmt:
		for _, r := range x.Results {
			w.visitCalls(r, en)
		}
	}
}

// condition evaluates `a == b` and `a != b` on known values.
func condition(e ast.Expr, en *env) (taken bool, known bool) {
	b, ok := e.(*ast.BinaryExpr)
	if !ok || (b.Op != token.EQL && b.Op != token.NEQ) {
		return false, false
	}
	l, r := eval(b.X, en), eval(b.Y, en)
	if isUnresolved(l) || isUnresolved(r) {
		return false, false
	}
	if _, ok := l.(map[string]value); ok {
		return false, false
	}
	eq := fmt.Sprint(l) == fmt.Sprint(r)
	return eq == (b.Op == token.EQL), true
}

type table struct {
	Test        string         `json:"test"`
	Description string         `json:"description,omitempty"`
	Features    []string       `json:"features"`
	Manifests   []string       `json:"manifests"`
	Source      string         `json:"source"`
	Calls       []recordedCall `json:"calls"`
}

func main() {
	if len(os.Args) != 3 && len(os.Args) != 4 {
		fmt.Fprintln(os.Stderr, "usage: conformance-tables <conformance module dir> <out dir> [<gateway-api module dir>]")
		os.Exit(2)
	}
	dir, out := os.Args[1], os.Args[2]
	// The API's string constants (PathMatchPathPrefix, HeaderMatchExact): objects the tests create
	// in code use them. The tests import the package as v1 or gatewayv1.
	if len(os.Args) == 4 {
		for _, f := range must(filepath.Glob(filepath.Join(os.Args[3], "apis/v1/*.go"))) {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			for n, v := range stringConsts(must(parser.ParseFile(fset, f, nil, 0))) {
				consts["v1."+n] = v
				consts["gatewayv1."+n] = v
			}
		}
	}
	for _, f := range must(filepath.Glob(filepath.Join(dir, "utils/suite/*.go"))) {
		for n, v := range stringConsts(must(parser.ParseFile(fset, f, nil, 0))) {
			consts["confsuite."+n] = v
			consts["suite."+n] = v
		}
	}
	files := must(filepath.Glob(filepath.Join(dir, "tests/*.go")))
	sort.Strings(files)
	// The package's functions (a test may call a helper another file defines, as the retry tests
	// share assertConsistentRetryBehaviour) and its tests, by variable name (a test may reuse
	// another's body: `Test: HTTPRouteRequestHeaderModifier.Test`).
	funcs := map[string]helper{}
	type parsed struct {
		name    string
		file    *ast.File
		aliases map[string]string
	}
	var sources []parsed
	bodies := map[string]*ast.FuncLit{}
	bodyAliases := map[string]map[string]string{}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file := must(parser.ParseFile(fset, f, nil, 0))
		al := importAliases(file)
		sources = append(sources, parsed{f, file, al})
		for _, d := range file.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv == nil && fd.Body != nil {
				funcs[fd.Name.Name] = helper{fd, al}
			}
			if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.VAR {
				for _, sp := range g.Specs {
					vs := sp.(*ast.ValueSpec)
					for i, n := range vs.Names {
						if i < len(vs.Values) {
							if cl, ok := vs.Values[i].(*ast.CompositeLit); ok {
								for _, el := range cl.Elts {
									if kv, ok := el.(*ast.KeyValueExpr); ok && kv.Key.(*ast.Ident).Name == "Test" {
										if fl, ok := kv.Value.(*ast.FuncLit); ok {
											bodies[n.Name] = fl
											bodyAliases[n.Name] = al
										}
									}
								}
							}
						}
					}
				}
			}
		}
	}
	count := 0
	for _, p := range sources {
		f, file := p.name, p.file
		aliases = p.aliases
		ast.Inspect(file, func(n ast.Node) bool {
			cl, ok := n.(*ast.CompositeLit)
			if !ok || typeName(cl.Type) != "confsuite.ConformanceTest" {
				return true
			}
			t := table{Source: "conformance/tests/" + filepath.Base(f), Features: []string{}, Manifests: []string{}}
			var body *ast.FuncLit
			bodyFrom := p.aliases
			root := &env{vars: map[string]value{}}
			for _, el := range cl.Elts {
				kv := el.(*ast.KeyValueExpr)
				switch kv.Key.(*ast.Ident).Name {
				case "ShortName":
					t.Test, _ = eval(kv.Value, root).(string)
				case "Description":
					t.Description, _ = eval(kv.Value, root).(string)
				case "Manifests":
					for _, m := range eval(kv.Value, root).([]value) {
						if s, ok := m.(string); ok {
							t.Manifests = append(t.Manifests, s)
						}
					}
				case "Features":
					for _, ft := range kv.Value.(*ast.CompositeLit).Elts {
						t.Features = append(t.Features, strings.TrimPrefix(src(ft), "features."))
					}
				case "Test":
					switch v := kv.Value.(type) {
					case *ast.FuncLit:
						body = v
					case *ast.SelectorExpr:
						if x, ok := v.X.(*ast.Ident); ok && v.Sel.Name == "Test" {
							body, bodyFrom = bodies[x.Name], bodyAliases[x.Name]
						}
					}
				}
			}
			if body == nil || t.Test == "" {
				return false
			}
			w := &walker{funcs: funcs}
			aliases = bodyFrom
			w.block(body.Body.List, root)
			aliases = p.aliases
			t.Calls = w.calls
			if t.Calls == nil {
				t.Calls = []recordedCall{}
			}
			data := must(json.MarshalIndent(t, "", "  "))
			if err := os.WriteFile(filepath.Join(out, t.Test+".json"), append(data, '\n'), 0o644); err != nil {
				panic(err)
			}
			count++
			return false
		})
	}
	fmt.Fprintf(os.Stderr, "conformance-tables: %d tests written to %s\n", count, out)
}

// stringConsts are a file's constants whose values are string literals (or built from them).
func stringConsts(file *ast.File) map[string]string {
	m := map[string]string{}
	for _, d := range file.Decls {
		if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.CONST {
			for _, sp := range g.Specs {
				vs := sp.(*ast.ValueSpec)
				for i, n := range vs.Names {
					if i < len(vs.Values) {
						if v, ok := eval(vs.Values[i], &env{vars: map[string]value{}}).(string); ok {
							m[n.Name] = v
						}
					}
				}
			}
		}
	}
	return m
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
