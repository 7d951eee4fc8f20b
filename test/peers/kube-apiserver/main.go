// Command kube-apiserver runs a real etcd and a real kube-apiserver in one process, on
// loopback only, for lbdns's tests. It is test tooling: lbdns itself stays TypeScript.
//
// State (etcd data, CA, serving certificate, service-account key, tokens, kubeconfigs) lives
// in -dir and is reused when the same -dir starts again, so a test can stop the server and
// bring the same cluster back on the same port (an API outage).
//
// When /readyz answers, it prints one JSON line on stdout:
//
//	{"ready":true,"url":"https://127.0.0.1:PORT","admin":"DIR/admin.kubeconfig","kubeconfigs":{NAME:PATH}}
package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/csv"
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
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
	"k8s.io/kubernetes/cmd/kube-apiserver/app"
)

// users is -user NAME[=GROUP,GROUP…], repeated: a static token and a kubeconfig for each.
type users []string

func (u *users) String() string     { return strings.Join(*u, " ") }
func (u *users) Set(v string) error { *u = append(*u, v); return nil }

const adminUser = "lbdns-test-admin"

func main() {
	dir := flag.String("dir", "", "state folder; reused when it already holds a cluster")
	var extra, sans users
	flag.Var(&extra, "user", "NAME[=GROUP,GROUP…]: a static token and DIR/NAME.kubeconfig for that identity (repeatable)")
	flag.Var(&sans, "san", "a DNS name the serving certificate names besides localhost (repeatable; first start only)")
	version := flag.Bool("version", false, "print the versions of kube-apiserver and etcd built in, and exit")
	flag.Parse()
	if *version {
		fmt.Println(versions())
		return
	}
	if *dir == "" {
		fail(errors.New("-dir is required"))
	}
	if err := run(*dir, extra, sans); err != nil {
		fail(err)
	}
}

// versions names the modules this binary was built from, as the build recorded them.
func versions() string {
	kube, etcd := "?", "?"
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, dep := range info.Deps {
			switch dep.Path {
			case "k8s.io/kubernetes":
				kube = dep.Version
			case "go.etcd.io/etcd/server/v3":
				etcd = dep.Version
			}
		}
	}
	return "kube-apiserver " + kube + " with etcd " + etcd
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "kube-apiserver peer:", err)
	os.Exit(1)
}

func run(dir string, extra, sans users) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	ports, err := loadPorts(filepath.Join(dir, "ports.json"))
	if err != nil {
		return err
	}
	if err := ensureCerts(dir, sans); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "audit-policy.yaml"), []byte(auditPolicy), 0o600); err != nil {
		return err
	}
	tokens, err := ensureTokens(filepath.Join(dir, "tokens.csv"), append(users{adminUser + "=system:masters"}, extra...))
	if err != nil {
		return err
	}

	etcd, err := startEtcd(filepath.Join(dir, "etcd"), ports)
	if err != nil {
		return err
	}
	defer etcd.Close()

	serverURL := "https://127.0.0.1:" + strconv.Itoa(ports.API)
	kubeconfigs := map[string]string{}
	for name, token := range tokens {
		path := filepath.Join(dir, name+".kubeconfig")
		if name == adminUser {
			path = filepath.Join(dir, "admin.kubeconfig")
		}
		if err := writeKubeconfig(path, serverURL, filepath.Join(dir, "ca.crt"), name, token); err != nil {
			return err
		}
		kubeconfigs[name] = path
	}

	go announceWhenReady(serverURL, filepath.Join(dir, "ca.crt"), tokens[adminUser], kubeconfigs)

	cmd := app.NewAPIServerCommand()
	cmd.SetArgs([]string{
		"--bind-address=127.0.0.1",
		"--advertise-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(ports.API),
		"--tls-cert-file=" + filepath.Join(dir, "serving.crt"),
		"--tls-private-key-file=" + filepath.Join(dir, "serving.key"),
		"--etcd-servers=http://127.0.0.1:" + strconv.Itoa(ports.EtcdClient),
		"--token-auth-file=" + filepath.Join(dir, "tokens.csv"),
		"--authorization-mode=RBAC",
		"--service-account-issuer=https://kubernetes.default.svc",
		"--service-account-key-file=" + filepath.Join(dir, "sa.key"),
		"--service-account-signing-key-file=" + filepath.Join(dir, "sa.key"),
		"--service-cluster-ip-range=10.96.0.0/16",
		// No kube-controller-manager runs beside this server, so nothing would ever create a
		// namespace's default ServiceAccount that this admission plugin insists on for pods.
		"--disable-admission-plugins=ServiceAccount",
		// A lone test server: the kubernetes Service's endpoints need no reconciling.
		"--endpoint-reconciler-type=none",
		// Every request at Metadata level, written before the response (the log backend's
		// blocking mode): tests read who asked what, as a cluster admin reads an audit log.
		"--audit-policy-file=" + filepath.Join(dir, "audit-policy.yaml"),
		"--audit-log-path=" + filepath.Join(dir, "audit.log"),
		"--audit-log-mode=blocking",
		"--profiling=false",
		"--v=0",
	})
	return cmd.Execute()
}

const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
- level: Metadata
`

type ports struct {
	API        int `json:"api"`
	EtcdClient int `json:"etcdClient"`
	EtcdPeer   int `json:"etcdPeer"`
}

// loadPorts keeps the ports of the first start: a restarted cluster answers where its
// kubeconfigs point, and etcd's stored peer URL stays its own.
func loadPorts(path string) (ports, error) {
	var p ports
	if data, err := os.ReadFile(path); err == nil {
		return p, json.Unmarshal(data, &p)
	} else if !errors.Is(err, os.ErrNotExist) {
		return p, err
	}
	for _, slot := range []*int{&p.API, &p.EtcdClient, &p.EtcdPeer} {
		port, err := freePort()
		if err != nil {
			return p, err
		}
		*slot = port
	}
	data, _ := json.Marshal(p)
	return p, os.WriteFile(path, data, 0o600)
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func startEtcd(dataDir string, p ports) (*embed.Etcd, error) {
	cfg := embed.NewConfig()
	cfg.Dir = dataDir
	cfg.Name = "lbdns-test"
	client := url.URL{Scheme: "http", Host: "127.0.0.1:" + strconv.Itoa(p.EtcdClient)}
	peer := url.URL{Scheme: "http", Host: "127.0.0.1:" + strconv.Itoa(p.EtcdPeer)}
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{client}, []url.URL{client}
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{peer}, []url.URL{peer}
	cfg.InitialCluster = cfg.Name + "=" + peer.String()
	cfg.LogLevel = "error"
	// A test cluster's data need not survive a power cut; fsync per write would slow every test.
	cfg.UnsafeNoFsync = true
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		return nil, fmt.Errorf("etcd: %w", err)
	}
	select {
	case <-e.Server.ReadyNotify():
		return e, nil
	case <-time.After(30 * time.Second):
		e.Close()
		return nil, errors.New("etcd: not ready after 30 s")
	}
}

func announceWhenReady(serverURL, caFile, token string, kubeconfigs map[string]string) {
	pem, err := os.ReadFile(caFile)
	if err != nil {
		fail(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pem)
	client := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	for {
		req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, serverURL+"/readyz", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		if resp, err := client.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	line, _ := json.Marshal(map[string]any{"ready": true, "url": serverURL, "admin": kubeconfigs[adminUser], "kubeconfigs": kubeconfigs})
	fmt.Println(string(line))
}

// ensureCerts makes a CA, a serving certificate for 127.0.0.1, ::1 and localhost, and a
// service-account signing key, unless the folder has them from an earlier start.
func ensureCerts(dir string, sans []string) error {
	if _, err := os.Stat(filepath.Join(dir, "sa.key")); err == nil {
		return nil
	}
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	now := time.Now()
	caTmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "lbdns-test-ca"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(10 * 365 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return err
	}
	ca, _ := x509.ParseCertificate(caDER)
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2),
		Subject:      pkix.Name{CommonName: "kube-apiserver"},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(10 * 365 * 24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("::1")},
		DNSNames:     append([]string{"localhost"}, sans...),
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return err
	}
	saKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	files := []struct {
		name, kind string
		der        []byte
	}{
		{"ca.crt", "CERTIFICATE", caDER},
		{"serving.crt", "CERTIFICATE", der},
		{"serving.key", "EC PRIVATE KEY", mustEC(key)},
		{"sa.key", "EC PRIVATE KEY", mustEC(saKey)},
	}
	for _, f := range files {
		if err := os.WriteFile(filepath.Join(dir, f.name), pem.EncodeToMemory(&pem.Block{Type: f.kind, Bytes: f.der}), 0o600); err != nil {
			return err
		}
	}
	return nil
}

func mustEC(k *ecdsa.PrivateKey) []byte {
	der, err := x509.MarshalECPrivateKey(k)
	if err != nil {
		fail(err)
	}
	return der
}

// ensureTokens keeps the tokens of earlier starts and adds one for each new identity.
func ensureTokens(path string, wanted users) (map[string]string, error) {
	tokens := map[string]string{}
	var rows [][]string
	if f, err := os.Open(path); err == nil {
		rows, err = csv.NewReader(f).ReadAll()
		f.Close()
		if err != nil {
			return nil, err
		}
		for _, r := range rows {
			tokens[r[1]] = r[0]
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	for _, spec := range wanted {
		name, groups, _ := strings.Cut(spec, "=")
		if name == "" {
			return nil, fmt.Errorf("-user %q: no name", spec)
		}
		if _, ok := tokens[name]; ok {
			continue
		}
		b := make([]byte, 16)
		if _, err := rand.Read(b); err != nil {
			return nil, err
		}
		token := hex.EncodeToString(b)
		tokens[name] = token
		rows = append(rows, []string{token, name, name, groups})
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return nil, err
	}
	w := csv.NewWriter(f)
	if err := w.WriteAll(rows); err != nil {
		f.Close()
		return nil, err
	}
	return tokens, f.Close()
}

func writeKubeconfig(path, server, caFile, user, token string) error {
	ca, err := os.ReadFile(caFile)
	if err != nil {
		return err
	}
	cfg := map[string]any{
		"apiVersion":      "v1",
		"kind":            "Config",
		"current-context": "test",
		"clusters":        []any{map[string]any{"name": "test", "cluster": map[string]any{"server": server, "certificate-authority-data": ca}}},
		"users":           []any{map[string]any{"name": user, "user": map[string]any{"token": token}}},
		"contexts":        []any{map[string]any{"name": "test", "context": map[string]any{"cluster": "test", "user": user}}},
	}
	data, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
