// Command kubelet-streaming is the port-forward half of a kubelet's streaming server, for the e2e
// harness's fake kubelet: it serves /portForward/{namespace}/{pod}[/{uid}] over HTTPS with the
// kubelet's own code (k8s.io/cri-streaming's ServePortForward: SPDY and the v4 websocket protocol)
// and forwards every stream to 127.0.0.1:<port>, since every fake Pod runs on this host. It prints
// the port it listens on, once listening, on a line of its own.
package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"flag"
	"fmt"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"os"
	"strconv"
	"time"

	"k8s.io/cri-streaming/pkg/streaming/portforward"
	"k8s.io/cri-streaming/pkg/streaming/remotecommand"
)

func main() {
	address := flag.String("address", "127.0.0.1", "address to listen on")
	port := flag.Int("port", 0, "port to listen on (0: any free port)")
	idle := flag.Duration("idle-timeout", 4*time.Hour, "a stream idle this long is closed (the kubelet's default)")
	exitWithStdin := flag.Bool("exit-with-stdin", false, "exit when standard input closes (the parent is gone)")
	flag.Parse()

	cert, err := selfSigned()
	if err != nil {
		log.Fatalf("certificate: %v", err)
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(*address, strconv.Itoa(*port)))
	if err != nil {
		log.Fatalf("listen: %v", err)
	}
	handler := func(w http.ResponseWriter, req *http.Request) {
		opts, err := portforward.NewV4Options(req)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		portforward.ServePortForward(w, req, loopbackForwarder{}, req.PathValue("pod"), req.PathValue("uid"), opts,
			*idle, remotecommand.DefaultStreamCreationTimeout, portforward.SupportedProtocols)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/portForward/{namespace}/{pod}", handler)
	mux.HandleFunc("/portForward/{namespace}/{pod}/{uid}", handler)
	srv := &http.Server{
		Handler:   mux,
		TLSConfig: &tls.Config{Certificates: []tls.Certificate{cert}, NextProtos: []string{"http/1.1"}},
		// Upgrades (SPDY, websocket) need HTTP/1.1: no HTTP/2.
		TLSNextProto:      map[string]func(*http.Server, *tls.Conn, http.Handler){},
		ReadHeaderTimeout: 30 * time.Second,
	}
	if *exitWithStdin {
		go func() {
			_, _ = io.Copy(io.Discard, os.Stdin)
			os.Exit(0)
		}()
	}
	fmt.Println(ln.Addr().(*net.TCPAddr).Port)
	if err := srv.ServeTLS(ln, "", ""); err != nil {
		log.Fatalf("serve: %v", err)
	}
}

// loopbackForwarder forwards a stream to 127.0.0.1:<port>, as a container runtime would to the Pod's
// network namespace.
type loopbackForwarder struct{}

func (loopbackForwarder) PortForward(ctx context.Context, _, _ string, port int32, stream io.ReadWriteCloser) error {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(int(port))))
	if err != nil {
		return err
	}
	defer conn.Close()
	go func() {
		// The client's end of its stream is a half-close toward the Pod, as with a runtime.
		_, _ = io.Copy(conn, stream)
		_ = conn.(*net.TCPConn).CloseWrite()
	}()
	// Done once the Pod ends its side: the caller then closes the stream, after everything was written.
	_, err = io.Copy(stream, conn)
	return err
}

// selfSigned makes a certificate for 127.0.0.1 and localhost: the API server reaches kubelets without
// verifying them when it has no --kubelet-certificate-authority.
func selfSigned() (tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "fake-node"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1")},
		DNSNames:     []string{"localhost", "fake-node"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, nil
}
