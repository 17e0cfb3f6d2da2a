// Go net/http peer for scripts/https-h2-bulk.sh: HTTP/2 multiplexing and bulk downloads, loopback
// only, standard library only (Debian's golang-go builds it with GOPROXY=off).
//
// usage: h2_bench --url https://www.example.test:PORT/PATH --connect-ip 127.0.0.1 --cainfo FILE
//
//	--pin sha256//B64 --mode parallel|download [--requests N] [--concurrency C] [--alg LABEL]
//	[--http1]
//
// Trust as in ../shared/bench/go/https_bench.go: RootCAs = --cainfo, ServerName = the URL host,
// an SPKI SHA-256 pin of the leaf in VerifyConnection, TLS 1.3, dialled at --connect-ip.
// HTTP/2 through ALPN (ForceAttemptHTTP2) unless --http1.
//
//	parallel   one untimed GET opens the connection; then N GETs, C at a time from C goroutines,
//	           over that one connection (a GET on any other connection is an error); prints
//	           requests, seconds, req_per_sec, us_per_req, client_cpu_us_per_req
//	download   one GET, the body read and discarded; prints bytes, seconds, mb_per_sec,
//	           client CPU and the process's peak resident memory (maxrss_kb)
package main

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

func usage() (cpu float64, maxrssKB int64) {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return float64(ru.Utime.Sec+ru.Stime.Sec) + float64(ru.Utime.Usec+ru.Stime.Usec)*1e-6, ru.Maxrss
}

func fail(code int, f string, a ...interface{}) {
	fmt.Fprintf(os.Stderr, f+"\n", a...)
	os.Exit(code)
}

func main() {
	rawURL := flag.String("url", "", "https://HOST:PORT/PATH")
	ip := flag.String("connect-ip", "127.0.0.1", "address to connect to (loopback only)")
	cainfo := flag.String("cainfo", "", "trust store PEM")
	pin := flag.String("pin", "", "sha256//B64 SPKI pin of the leaf")
	mode := flag.String("mode", "parallel", "parallel|download")
	nreq := flag.Int("requests", 10000, "timed requests (parallel)")
	conc := flag.Int("concurrency", 100, "requests in flight (parallel)")
	alg := flag.String("alg", "unknown", "label")
	http1 := flag.Bool("http1", false, "HTTP/1.1 only")
	flag.Parse()
	if cip := net.ParseIP(*ip); cip == nil || !cip.IsLoopback() {
		fail(2, "loopback only")
	}
	u, err := url.Parse(*rawURL)
	if err != nil || u.Scheme != "https" || u.Hostname() == "" || *cainfo == "" {
		fail(2, "--url https://... and --cainfo required")
	}
	port := u.Port()
	pemBytes, err := os.ReadFile(*cainfo)
	if err != nil {
		fail(2, "%v", err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(pemBytes) {
		fail(2, "no certificates in %s", *cainfo)
	}
	cfg := &tls.Config{RootCAs: roots, ServerName: u.Hostname(), MinVersion: tls.VersionTLS13,
		VerifyConnection: func(cs tls.ConnectionState) error {
			if *pin == "" {
				return nil
			}
			sum := sha256.Sum256(cs.PeerCertificates[0].RawSubjectPublicKeyInfo)
			if got := "sha256//" + base64.StdEncoding.EncodeToString(sum[:]); got != *pin {
				return fmt.Errorf("public key pin mismatch: %s", got)
			}
			return nil
		}}
	dialer := &net.Dialer{Timeout: 10 * time.Second}
	var dials int64
	tr := &http.Transport{
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			atomic.AddInt64(&dials, 1)
			return dialer.DialContext(ctx, "tcp", net.JoinHostPort(*ip, port))
		},
		TLSClientConfig: cfg, ForceAttemptHTTP2: !*http1, DisableCompression: true, MaxIdleConnsPerHost: 1,
	}
	if *http1 {
		tr.TLSNextProto = map[string]func(string, *tls.Conn) http.RoundTripper{}
	}
	client := &http.Client{Transport: tr}
	var reused int64
	trace := &httptrace.ClientTrace{GotConn: func(i httptrace.GotConnInfo) {
		if i.Reused {
			atomic.AddInt64(&reused, 1)
		}
	}}
	ctx := httptrace.WithClientTrace(context.Background(), trace)
	get := func() (int64, string, error) {
		req, _ := http.NewRequestWithContext(ctx, "GET", *rawURL, nil)
		resp, err := client.Do(req)
		if err != nil {
			return 0, "", err
		}
		n, err := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if err == nil && resp.StatusCode != 200 {
			err = fmt.Errorf("HTTP %d", resp.StatusCode)
		}
		return n, resp.Proto, err
	}
	out := map[string]interface{}{"impl": "go-net-http", "alg": *alg}
	switch *mode {
	case "parallel":
		if _, proto, err := get(); err != nil {
			fail(1, "warm-up: %v", err)
		} else {
			out["protocol"] = proto
		}
		var errors int64
		jobs := make(chan struct{}, *nreq)
		for i := 0; i < *nreq; i++ {
			jobs <- struct{}{}
		}
		close(jobs)
		c0, _ := usage()
		t0 := time.Now()
		var wg sync.WaitGroup
		for w := 0; w < *conc; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range jobs {
					if _, _, err := get(); err != nil {
						if atomic.AddInt64(&errors, 1) <= 3 {
							fmt.Fprintf(os.Stderr, "request failed: %v\n", err)
						}
					}
				}
			}()
		}
		wg.Wait()
		s := time.Since(t0).Seconds()
		c1, _ := usage()
		out["bench"] = "h2-parallel"
		out["requests"], out["concurrency"], out["errors"], out["connections"] = *nreq, *conc, errors, dials
		out["seconds"], out["req_per_sec"] = s, float64(*nreq)/s
		out["us_per_req"], out["client_cpu_us_per_req"] = s*1e6/float64(*nreq), (c1-c0)*1e6/float64(*nreq)
		out["ok"] = errors == 0 && dials == 1
	case "download":
		c0, _ := usage()
		t0 := time.Now()
		n, proto, err := get()
		s := time.Since(t0).Seconds()
		c1, rss := usage()
		if err != nil {
			fail(1, "download: %v", err)
		}
		out["bench"], out["protocol"], out["bytes"], out["seconds"] = "download", proto, n, s
		out["mb_per_sec"], out["client_cpu_s"], out["maxrss_kb"], out["ok"] = float64(n)/s/1e6, c1-c0, rss, true
	default:
		fail(2, "unknown mode %s", *mode)
	}
	line, _ := json.Marshal(out)
	fmt.Println(string(line))
}
