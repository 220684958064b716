// A real Kubernetes control plane for tests: embedded etcd plus the genuine kube-apiserver command
// (k8s.io/kubernetes/cmd/kube-apiserver/app) in one process, HTTPS on 127.0.0.1 only.
//
// Everything it needs lives in --state-dir (etcd data, certificates, service-account keys, admin
// token, chosen ports), so running it again on the same directory is an "API server restart" with
// the same URL, CA, tokens and stored objects. Prints one line
//
//	KUBE-APISERVER READY {"url":...,"kubeconfig":...,"token":...,"caFile":...}
//
// on stdout once /readyz answers 200, and shuts down cleanly on SIGTERM/SIGINT.
//
// Usage: kube-apiserver --state-dir DIR [--user TOKEN,NAME[,GROUP...]]... [-- extra kube-apiserver flags]
package main

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"flag"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/client-go/util/cert"
	"k8s.io/client-go/util/keyutil"
	"k8s.io/kubernetes/cmd/kube-apiserver/app"
)

const readyPrefix = "KUBE-APISERVER READY "

type userList []string

func (u *userList) String() string     { return strings.Join(*u, " ") }
func (u *userList) Set(v string) error { *u = append(*u, v); return nil }

// ports are chosen once per state dir and reused, so a restart keeps the URL (and etcd's peer URL).
type ports struct {
	APIServer  int `json:"apiserver"`
	EtcdClient int `json:"etcdClient"`
	EtcdPeer   int `json:"etcdPeer"`
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "kube-apiserver harness:", err)
		os.Exit(1)
	}
}

func run() error {
	fs := flag.NewFlagSet("kube-apiserver-harness", flag.ContinueOnError)
	stateDir := fs.String("state-dir", "", "directory holding etcd data, certificates, keys and ports (created if missing)")
	port := fs.Int("port", 0, "HTTPS port on 127.0.0.1 for a new state dir (0 picks a free one)")
	var users userList
	fs.Var(&users, "user", "extra static token user: TOKEN,NAME[,GROUP...] (repeatable)")
	if err := fs.Parse(os.Args[1:]); err != nil {
		return err
	}
	if *stateDir == "" {
		return errors.New("--state-dir is required")
	}
	dir, err := filepath.Abs(*stateDir)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}

	// One server per state dir: a second one would rewrite the certificates and tokens under the first.
	lock, err := os.OpenFile(filepath.Join(dir, "lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return err
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		return fmt.Errorf("state dir %s is in use by another kube-apiserver: %w", dir, err)
	}

	p, err := loadOrPickPorts(filepath.Join(dir, "ports.json"), *port)
	if err != nil {
		return err
	}
	caPEM, err := ensureServingCert(dir)
	if err != nil {
		return err
	}
	if err := ensureServiceAccountKey(filepath.Join(dir, "sa.key")); err != nil {
		return err
	}
	adminToken, err := ensureToken(filepath.Join(dir, "admin-token"))
	if err != nil {
		return err
	}
	if err := writeTokenFile(filepath.Join(dir, "tokens.csv"), adminToken, users); err != nil {
		return err
	}
	serverURL := fmt.Sprintf("https://127.0.0.1:%d", p.APIServer)
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := writeKubeconfig(kubeconfig, serverURL, caPEM, adminToken); err != nil {
		return err
	}

	// The command installs the SIGTERM/SIGINT handler when it is built; build it before etcd starts so
	// an early signal still shuts down cleanly.
	cmd := app.NewAPIServerCommand()
	args := []string{
		"--etcd-servers=" + fmt.Sprintf("http://127.0.0.1:%d", p.EtcdClient),
		"--bind-address=127.0.0.1",
		"--advertise-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(p.APIServer),
		"--tls-cert-file=" + filepath.Join(dir, "apiserver.crt"),
		"--tls-private-key-file=" + filepath.Join(dir, "apiserver.key"),
		"--token-auth-file=" + filepath.Join(dir, "tokens.csv"),
		"--authorization-mode=RBAC",
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file=" + filepath.Join(dir, "sa.key"),
		"--service-account-signing-key-file=" + filepath.Join(dir, "sa.key"),
		"--service-cluster-ip-range=10.96.0.0/16",
		// Loopback addresses are not valid endpoints; no controller-manager or nodes exist anyway.
		"--endpoint-reconciler-type=none",
		"--allow-privileged=true",
		"--profiling=false",
	}
	cmd.SetArgs(append(args, fs.Args()...))

	etcd, err := startEtcd(filepath.Join(dir, "etcd"), filepath.Join(dir, "etcd.log"), p)
	if err != nil {
		return err
	}
	defer etcd.Close()

	go announceWhenReady(serverURL, caPEM, adminToken, kubeconfig, filepath.Join(dir, "ca.crt"))
	go func() {
		if err, ok := <-etcd.Err(); ok && err != nil {
			fmt.Fprintln(os.Stderr, "kube-apiserver harness: etcd failed:", err)
			os.Exit(1)
		}
	}()
	return cmd.Execute()
}

func loadOrPickPorts(file string, apiPort int) (ports, error) {
	var p ports
	if b, err := os.ReadFile(file); err == nil {
		return p, json.Unmarshal(b, &p)
	} else if !errors.Is(err, os.ErrNotExist) {
		return p, err
	}
	var err error
	if apiPort != 0 {
		p.APIServer = apiPort
	} else if p.APIServer, err = freePort(); err != nil {
		return p, err
	}
	if p.EtcdClient, err = freePort(); err != nil {
		return p, err
	}
	if p.EtcdPeer, err = freePort(); err != nil {
		return p, err
	}
	b, _ := json.Marshal(p)
	return p, os.WriteFile(file, b, 0o600)
}

// freePort prefers a port below the kernel's ephemeral range: there, nothing but an explicit bind can
// take it between this check and kube-apiserver binding it (outgoing connections never do).
func freePort() (int, error) {
	if b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); err == nil {
		if f := strings.Fields(string(b)); len(f) == 2 {
			if low, err := strconv.Atoi(f[0]); err == nil && low > 3000 {
				base := max(1024, low-20000)
				for range 50 {
					n, _ := rand.Int(rand.Reader, big.NewInt(int64(low-base)))
					port := base + int(n.Int64())
					if l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port)); err == nil {
						l.Close()
						return port, nil
					}
				}
			}
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func startEtcd(dataDir, logFile string, p ports) (*embed.Etcd, error) {
	cfg := embed.NewConfig()
	cfg.Name = "test"
	cfg.Dir = dataDir
	client := url.URL{Scheme: "http", Host: fmt.Sprintf("127.0.0.1:%d", p.EtcdClient)}
	peer := url.URL{Scheme: "http", Host: fmt.Sprintf("127.0.0.1:%d", p.EtcdPeer)}
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{client}, []url.URL{client}
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{peer}, []url.URL{peer}
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	// Its own file: etcd's zap JSON (and its noisy errors while closing) would bury the apiserver's log.
	cfg.LogLevel = "warn"
	cfg.LogOutputs = []string{logFile}
	// Test data: a clean shutdown still persists everything, and fsync dominates write latency.
	cfg.UnsafeNoFsync = true
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		return nil, fmt.Errorf("starting etcd (log: %s): %w", logFile, err)
	}
	select {
	case <-e.Server.ReadyNotify():
		return e, nil
	case <-time.After(60 * time.Second):
		e.Close()
		return nil, errors.New("etcd did not become ready in 60s")
	}
}

// ensureServingCert writes ca.crt and a CA-signed apiserver.crt/key for 127.0.0.1 and the in-cluster
// names, once per state dir; returns the CA PEM for kubeconfigs.
func ensureServingCert(dir string) ([]byte, error) {
	caFile, crtFile, keyFile := filepath.Join(dir, "ca.crt"), filepath.Join(dir, "apiserver.crt"), filepath.Join(dir, "apiserver.key")
	if ca, err := os.ReadFile(caFile); err == nil {
		return ca, nil
	}
	crt, key, err := cert.GenerateSelfSignedCertKey("127.0.0.1",
		[]net.IP{net.ParseIP("::1"), net.ParseIP("10.96.0.1")},
		[]string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local"})
	if err != nil {
		return nil, err
	}
	// The bundle is the serving certificate followed by the CA that signed it.
	leaf, rest := pem.Decode(crt)
	if leaf == nil || len(bytes.TrimSpace(rest)) == 0 {
		return nil, errors.New("unexpected self-signed certificate bundle")
	}
	if err := cert.WriteCert(crtFile, crt); err != nil {
		return nil, err
	}
	if err := keyutil.WriteKey(keyFile, key); err != nil {
		return nil, err
	}
	ca := bytes.TrimSpace(rest)
	ca = append(ca, '\n')
	return ca, os.WriteFile(caFile, ca, 0o644)
}

func ensureServiceAccountKey(file string) error {
	if _, err := os.Stat(file); err == nil {
		return nil
	}
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	pemKey, err := keyutil.MarshalPrivateKeyToPEM(k)
	if err != nil {
		return err
	}
	return keyutil.WriteKey(file, pemKey)
}

func ensureToken(file string) (string, error) {
	if b, err := os.ReadFile(file); err == nil {
		return strings.TrimSpace(string(b)), nil
	}
	buf := make([]byte, 24)
	if _, err := rand.Read(buf); err != nil {
		return "", err
	}
	t := hex.EncodeToString(buf)
	return t, os.WriteFile(file, []byte(t+"\n"), 0o600)
}

// writeTokenFile renders kube-apiserver's static token file: token,user,uid,"group1,group2".
func writeTokenFile(file, adminToken string, users userList) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s,admin,admin,\"system:masters\"\n", adminToken)
	for _, u := range users {
		f := strings.Split(u, ",")
		if len(f) < 2 || f[0] == "" || f[1] == "" || strings.ContainsAny(u, "\"\n") {
			return fmt.Errorf("--user %q: want TOKEN,NAME[,GROUP...]", u)
		}
		fmt.Fprintf(&b, "%s,%s,%s", f[0], f[1], f[1])
		if len(f) > 2 {
			fmt.Fprintf(&b, ",\"%s\"", strings.Join(f[2:], ","))
		}
		b.WriteString("\n")
	}
	return os.WriteFile(file, []byte(b.String()), 0o600)
}

func writeKubeconfig(file, server string, caPEM []byte, token string) error {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["test"] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: caPEM}
	cfg.AuthInfos["admin"] = &clientcmdapi.AuthInfo{Token: token}
	cfg.Contexts["test"] = &clientcmdapi.Context{Cluster: "test", AuthInfo: "admin", Namespace: "default"}
	cfg.CurrentContext = "test"
	return clientcmd.WriteToFile(*cfg, file)
}

func announceWhenReady(server string, caPEM []byte, token, kubeconfig, caFile string) {
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caPEM)
	client := &http.Client{
		Timeout:   2 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}},
	}
	for {
		req, _ := http.NewRequest(http.MethodGet, server+"/readyz", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		if res, err := client.Do(req); err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				line, _ := json.Marshal(map[string]string{"url": server, "kubeconfig": kubeconfig, "token": token, "caFile": caFile})
				fmt.Fprintln(os.Stdout, readyPrefix+string(line))
				return
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
}
