// xds-check connects to an ADS server as a Gateway's proxy, fetches its Listeners, Routes,
// Clusters, Endpoints and Secrets (state of the world; RDS and EDS by the names the listeners and
// clusters reference), and runs go-control-plane's ValidateAll on every resource, recursing into
// every Any. It exits 1 and prints the violations if any resource is invalid.
package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"sort"
	"time"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	_ "github.com/envoyproxy/go-control-plane/envoy/extensions/access_loggers/open_telemetry/v3"
	_ "github.com/envoyproxy/go-control-plane/envoy/extensions/access_loggers/stream/v3"
	_ "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/cors/v3"
	_ "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/ext_authz/v3"
	_ "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/lua/v3"
	_ "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/router/v3"
	_ "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/stateful_session/v3"
	_ "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/wasm/v3"
	_ "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/listener/tls_inspector/v3"
	hcmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	_ "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/tcp_proxy/v3"
	_ "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/udp/udp_proxy/v3"
	_ "github.com/envoyproxy/go-control-plane/envoy/extensions/http/stateful_session/cookie/v3"
	_ "github.com/envoyproxy/go-control-plane/envoy/extensions/http/stateful_session/header/v3"
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	discoveryv3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/anypb"
)

const (
	ldsType = "type.googleapis.com/envoy.config.listener.v3.Listener"
	rdsType = "type.googleapis.com/envoy.config.route.v3.RouteConfiguration"
	cdsType = "type.googleapis.com/envoy.config.cluster.v3.Cluster"
	edsType = "type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment"
	sdsType = "type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.Secret"
)

type validator interface{ ValidateAll() error }

// validate runs ValidateAll on m and on every message packed in an Any inside it.
func validate(m proto.Message, where string, errs *[]string) {
	if v, ok := m.(validator); ok {
		if err := v.ValidateAll(); err != nil {
			*errs = append(*errs, fmt.Sprintf("%s: %v", where, err))
		}
	}
	var walk func(protoreflect.Message, string)
	walk = func(msg protoreflect.Message, path string) {
		msg.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
			visit := func(x protoreflect.Message, p string) {
				if a, ok := x.Interface().(*anypb.Any); ok {
					inner, err := anypb.UnmarshalNew(a, proto.UnmarshalOptions{})
					if err != nil {
						*errs = append(*errs, fmt.Sprintf("%s: cannot unpack %s: %v", p, a.GetTypeUrl(), err))
						return
					}
					validate(inner, p+"<"+string(inner.ProtoReflect().Descriptor().Name())+">", errs)
					return
				}
				walk(x, p)
			}
			p := path + "." + string(fd.Name())
			switch {
			case fd.IsList() && fd.Kind() == protoreflect.MessageKind:
				l := v.List()
				for i := 0; i < l.Len(); i++ {
					visit(l.Get(i).Message(), fmt.Sprintf("%s[%d]", p, i))
				}
			case fd.IsMap() && fd.MapValue().Kind() == protoreflect.MessageKind:
				v.Map().Range(func(k protoreflect.MapKey, mv protoreflect.Value) bool {
					visit(mv.Message(), fmt.Sprintf("%s[%v]", p, k.Interface()))
					return true
				})
			case !fd.IsList() && !fd.IsMap() && fd.Kind() == protoreflect.MessageKind:
				visit(v.Message(), p)
			}
			return true
		})
	}
	walk(m.ProtoReflect(), where)
}

func main() {
	addr := flag.String("address", "127.0.0.1:18000", "ADS server")
	node := flag.String("node", "", "node.cluster: the Gateway as namespace/name")
	timeout := flag.Duration("timeout", 20*time.Second, "overall timeout")
	certFile := flag.String("cert", "", "client certificate (PEM) for mTLS; with -key and -ca")
	keyFile := flag.String("key", "", "client key (PEM)")
	caFile := flag.String("ca", "", "CA bundle (PEM) the server certificate must chain to")
	serverName := flag.String("server-name", "", "name expected in the server certificate")
	flag.Parse()
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	creds := insecure.NewCredentials()
	if *caFile != "" {
		pool := x509.NewCertPool()
		pem, err := os.ReadFile(*caFile)
		if err != nil || !pool.AppendCertsFromPEM(pem) {
			fail(fmt.Errorf("-ca %s: no certificate (%v)", *caFile, err))
		}
		cfg := &tls.Config{RootCAs: pool, ServerName: *serverName, MinVersion: tls.VersionTLS12}
		if *certFile != "" {
			pair, err := tls.LoadX509KeyPair(*certFile, *keyFile)
			if err != nil {
				fail(err)
			}
			cfg.Certificates = []tls.Certificate{pair}
		}
		creds = credentials.NewTLS(cfg)
	}
	conn, err := grpc.NewClient(*addr, grpc.WithTransportCredentials(creds))
	if err != nil {
		fail(err)
	}
	defer conn.Close()
	stream, err := discoveryv3.NewAggregatedDiscoveryServiceClient(conn).StreamAggregatedResources(ctx)
	if err != nil {
		fail(err)
	}
	n := &corev3.Node{Id: "xds-check", Cluster: *node}
	fetch := func(typeURL string, names []string) []*anypb.Any {
		if err := stream.Send(&discoveryv3.DiscoveryRequest{Node: n, TypeUrl: typeURL, ResourceNames: names}); err != nil {
			fail(err)
		}
		for {
			resp, err := stream.Recv()
			if err != nil {
				fail(err)
			}
			if resp.GetTypeUrl() != typeURL {
				continue
			}
			// ACK, so the server does not wait on us.
			_ = stream.Send(&discoveryv3.DiscoveryRequest{Node: n, TypeUrl: typeURL, ResourceNames: names, VersionInfo: resp.GetVersionInfo(), ResponseNonce: resp.GetNonce()})
			return resp.GetResources()
		}
	}
	errs := []string{}
	counts := map[string]int{}
	// What the tests look at besides validity: the HTTP filters of each connection manager and
	// the per-route filter configs of each route.
	httpFilters := map[string][]string{}
	routeFilters := map[string][]string{}
	unpack := func(as []*anypb.Any, kind string) []proto.Message {
		var out []proto.Message
		for i, a := range as {
			m, err := anypb.UnmarshalNew(a, proto.UnmarshalOptions{})
			if err != nil {
				errs = append(errs, fmt.Sprintf("%s[%d]: %v", kind, i, err))
				continue
			}
			counts[kind]++
			out = append(out, m)
		}
		return out
	}
	clusters := unpack(fetch(cdsType, nil), "Cluster")
	var edsNames []string
	for _, m := range clusters {
		c := m.(*clusterv3.Cluster)
		validate(c, "Cluster "+c.GetName(), &errs)
		if c.GetType() == clusterv3.Cluster_EDS {
			name := c.GetEdsClusterConfig().GetServiceName()
			if name == "" {
				name = c.GetName()
			}
			edsNames = append(edsNames, name)
		}
	}
	if len(edsNames) > 0 {
		for _, m := range unpack(fetch(edsType, edsNames), "ClusterLoadAssignment") {
			c := m.(*endpointv3.ClusterLoadAssignment)
			validate(c, "ClusterLoadAssignment "+c.GetClusterName(), &errs)
		}
	}
	listeners := unpack(fetch(ldsType, nil), "Listener")
	var rdsNames, sdsNames []string
	for _, m := range listeners {
		l := m.(*listenerv3.Listener)
		validate(l, "Listener "+l.GetName(), &errs)
		hcms := []*anypb.Any{}
		if l.GetApiListener() != nil {
			hcms = append(hcms, l.GetApiListener().GetApiListener())
		}
		for _, fc := range l.GetFilterChains() {
			for _, f := range fc.GetFilters() {
				if f.GetTypedConfig() != nil {
					hcms = append(hcms, f.GetTypedConfig())
				}
			}
			if ts := fc.GetTransportSocket(); ts != nil && ts.GetTypedConfig() != nil {
				d := &tlsv3.DownstreamTlsContext{}
				if ts.GetTypedConfig().UnmarshalTo(d) == nil {
					for _, s := range d.GetCommonTlsContext().GetTlsCertificateSdsSecretConfigs() {
						sdsNames = append(sdsNames, s.GetName())
					}
				}
			}
		}
		for _, a := range hcms {
			h := &hcmv3.HttpConnectionManager{}
			if a.UnmarshalTo(h) == nil && h.GetRds() != nil {
				rdsNames = append(rdsNames, h.GetRds().GetRouteConfigName())
				for _, f := range h.GetHttpFilters() {
					httpFilters[h.GetRds().GetRouteConfigName()] = append(httpFilters[h.GetRds().GetRouteConfigName()], f.GetName())
				}
			}
		}
	}
	if len(rdsNames) > 0 {
		for _, m := range unpack(fetch(rdsType, rdsNames), "RouteConfiguration") {
			r := m.(*routev3.RouteConfiguration)
			validate(r, "RouteConfiguration "+r.GetName(), &errs)
			for _, vh := range r.GetVirtualHosts() {
				for _, rt := range vh.GetRoutes() {
					names := []string{}
					for k := range rt.GetTypedPerFilterConfig() {
						names = append(names, k)
					}
					sort.Strings(names)
					routeFilters[rt.GetName()] = names
				}
			}
		}
	}
	if len(sdsNames) > 0 {
		for _, m := range unpack(fetch(sdsType, sdsNames), "Secret") {
			s := m.(*tlsv3.Secret)
			validate(s, "Secret "+s.GetName(), &errs)
		}
	}
	sort.Strings(errs)
	out, _ := json.Marshal(map[string]any{"counts": counts, "errors": errs, "httpFilters": httpFilters, "routeFilters": routeFilters})
	fmt.Println(string(out))
	if len(errs) > 0 {
		os.Exit(1)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "xds-check:", err)
	os.Exit(2)
}
