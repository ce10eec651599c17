package dashboard_test

import (
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/hostmint/hostmint/storage"
	"github.com/hostmint/hostmint/storage/storagetest"
)

func TestOperatorSignin(t *testing.T) {
	t.Parallel()
	s := newSite(t, storage.SQLite, 2, "")
	b := s.browser()
	// No session: every page sends the browser to sign in.
	b.get("/dashboard/").redirectsTo(t, "/dashboard/signin")
	b.get("/dashboard/operator").redirectsTo(t, "/dashboard/signin")
	b.get("/dashboard").redirectsTo(t, "/dashboard/")

	signin := b.get("/dashboard/signin")
	if signin.status != 200 || !strings.Contains(signin.body, `<label for="token">`) {
		t.Fatalf("sign-in page: %d %s", signin.status, signin.body)
	}
	tok := signin.csrf(t)
	for _, wrong := range []string{"", "wrong", adminToken + "x", strings.ToUpper(adminToken)} {
		p := b.post("/dashboard/signin", url.Values{"csrf": {tok}, "token": {wrong}})
		if p.status != http.StatusUnauthorized || !strings.Contains(p.body, `id="token-error"`) || !strings.Contains(p.body, `aria-invalid="true"`) {
			t.Fatalf("token %q: %d %s", wrong, p.status, p.body)
		}
		if strings.Contains(p.header.Get("Set-Cookie"), "hostmint_session=") && !strings.Contains(p.header.Get("Set-Cookie"), "hostmint_session=;") {
			t.Fatalf("token %q set a session cookie", wrong)
		}
	}
	if n := s.count("dashboard_sessions"); n != 0 {
		t.Fatalf("%d sessions after wrong tokens", n)
	}
	b.signInOperator(t)
	if n := s.count("dashboard_sessions"); n != 1 {
		t.Fatalf("%d sessions after signing in", n)
	}
	b.get("/dashboard/").redirectsTo(t, "/dashboard/operator")
	// A signed-in browser that opens the sign-in page goes on.
	b.get("/dashboard/signin").redirectsTo(t, "/dashboard/operator")
}

// The sign-in form itself needs its token: no session can be forced on a
// browser from a page elsewhere.
func TestSigninForgery(t *testing.T) {
	t.Parallel()
	s := newSite(t, storage.SQLite, 2, "")
	b := s.browser()
	if p := b.post("/dashboard/signin", url.Values{"token": {adminToken}}); p.status != http.StatusForbidden {
		t.Fatalf("no csrf: %d", p.status)
	}
	b.get("/dashboard/signin")
	if p := b.post("/dashboard/signin", url.Values{"csrf": {"forged"}, "token": {adminToken}}); p.status != http.StatusForbidden {
		t.Fatalf("wrong csrf: %d", p.status)
	}
	// Cookie tossing: a page on a sibling domain sets the signin cookie to
	// a value of its choosing and posts the same value as the token.
	tossed := strings.Repeat("x", 40)
	u, _ := url.Parse(s.url + "/dashboard/")
	tosser := s.browser()
	tosser.client.Jar.SetCookies(u, []*http.Cookie{{Name: "hostmint_signin", Value: tossed, Path: "/dashboard/"}})
	if p := tosser.post("/dashboard/signin", url.Values{"csrf": {tossed}, "token": {adminToken}}); p.status != http.StatusForbidden {
		t.Fatalf("a tossed cookie with its own value as the token: %d", p.status)
	}
	// A form posted from a sibling host: a real pair of nonce and token,
	// but the browser says where the post came from.
	sibling := s.browser()
	tok := sibling.get("/dashboard/signin").csrf(t)
	req, _ := http.NewRequest("POST", s.url+"/dashboard/signin", strings.NewReader(url.Values{"csrf": {tok}, "token": {adminToken}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Sec-Fetch-Site", "same-site")
	if resp, err := sibling.client.Do(req); err != nil || resp.StatusCode != http.StatusForbidden {
		t.Fatalf("a sign-in posted from a sibling site: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}
	team := s.team("Acme", "acme.example.net")
	token := s.link(team)
	if p := s.browser().post("/dashboard/signin/link", url.Values{"token": {token}}); p.status != http.StatusForbidden {
		t.Fatalf("link without csrf: %d", p.status)
	}
	if n := s.count("dashboard_sessions"); n != 0 {
		t.Fatalf("%d sessions after forged sign-ins", n)
	}
	// The refused post did not spend the link.
	s.browser().signInWithLink(t, token)
}

func TestSessionCookie(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		base   string
		proto  string // X-Forwarded-Proto from the (trusted) proxy
		secure bool
	}{{"", "", false}, {"https://dns.example.net", "", true}, {"", "https", true}, {"", "http", false}, {"", "https, http", false}} {
		s := newSite(t, storage.SQLite, 2, tc.base)
		// The jar would not send Secure cookies over http: carry them by hand.
		c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		get, _ := http.NewRequest("GET", s.url+"/dashboard/signin", nil)
		if tc.proto != "" {
			get.Header.Set("X-Forwarded-Proto", tc.proto)
		}
		resp, err := c.Do(get)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		// Over TLS the cookies are __Host- ones, which only this host can set.
		name, path := "hostmint_signin", "/dashboard/"
		if tc.secure {
			name, path = "__Host-hostmint_signin", "/"
		}
		pre := resp.Cookies()
		if len(pre) != 1 || pre[0].Name != name || pre[0].Path != path || !pre[0].HttpOnly || pre[0].Secure != tc.secure {
			t.Fatalf("%s: sign-in cookie %v", tc.base, resp.Header["Set-Cookie"])
		}
		tok := page{status: resp.StatusCode, body: string(body)}.csrf(t)
		if tok == pre[0].Value {
			t.Errorf("%s: the form token is the cookie itself (a tossed cookie would come with its token)", tc.base)
		}
		req, _ := http.NewRequest("POST", s.url+"/dashboard/signin",
			strings.NewReader(url.Values{"csrf": {tok}, "token": {adminToken}}.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if tc.proto != "" {
			req.Header.Set("X-Forwarded-Proto", tc.proto)
		}
		req.AddCookie(pre[0])
		resp, err = c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		var sess *http.Cookie
		for _, ck := range resp.Cookies() {
			if ck.Name == strings.Replace(name, "signin", "session", 1) {
				sess = ck
			}
		}
		if resp.StatusCode != http.StatusSeeOther || sess == nil {
			t.Fatalf("%s: sign-in answered %d with %v", tc.base, resp.StatusCode, resp.Header["Set-Cookie"])
		}
		if !sess.HttpOnly || sess.SameSite != http.SameSiteStrictMode || sess.Secure != tc.secure || sess.Path != path {
			t.Errorf("%s: session cookie %q", tc.base, resp.Header["Set-Cookie"])
		}
		if d := time.Until(sess.Expires); d < 11*time.Hour || d > 13*time.Hour || sess.MaxAge < 11*3600 {
			t.Errorf("%s: session cookie lasts %v (max-age %d), want about 12h", tc.base, d, sess.MaxAge)
		}
		if len(sess.Value) < 40 {
			t.Errorf("%s: session secret %q is short", tc.base, sess.Value)
		}
		// Only a hash is stored.
		var id string
		if err := s.db.QueryRow("SELECT id FROM dashboard_sessions").Scan(&id); err != nil || id == sess.Value {
			t.Errorf("%s: stored session id %q (%v) is the cookie itself", tc.base, id, err)
		}
	}
}

// Expiry is the server's: a session past its stored expiry is over, whatever
// the browser's cookie says.
func TestSessionExpiry(t *testing.T) {
	t.Parallel()
	s := newSite(t, storage.SQLite, 2, "")
	b := s.browser()
	csrf := b.signInOperator(t)
	s.age("dashboard_sessions")
	b.get("/dashboard/operator").redirectsTo(t, "/dashboard/signin")
	b.post("/dashboard/operator/accounts", url.Values{"csrf": {csrf}, "name": {"x"}, "plan": {"team"}}).redirectsTo(t, "/dashboard/signin")
	if as, _ := s.accounts.List(t.Context()); len(as) != 0 {
		t.Fatalf("an expired session created %d accounts", len(as))
	}
}

func TestSignout(t *testing.T) {
	t.Parallel()
	s := newSite(t, storage.SQLite, 2, "")
	b := s.browser()
	csrf := b.signInOperator(t)
	u, _ := url.Parse(s.url + "/dashboard/")
	old := b.client.Jar.Cookies(u)
	// Sign-out is a form post like any other: it needs the token.
	if p := b.post("/dashboard/signout", url.Values{}); p.status != http.StatusForbidden {
		t.Fatalf("sign-out without csrf: %d", p.status)
	}
	b.post("/dashboard/signout", url.Values{"csrf": {csrf}}).redirectsTo(t, "/dashboard/signin")
	if n := s.count("dashboard_sessions"); n != 0 {
		t.Fatalf("%d sessions after sign-out", n)
	}
	b.get("/dashboard/operator").redirectsTo(t, "/dashboard/signin")
	// A copy of the old cookie is worth nothing either.
	replay := s.browser()
	replay.client.Jar.SetCookies(u, old)
	replay.get("/dashboard/operator").redirectsTo(t, "/dashboard/signin")
}

func TestSigninLink(t *testing.T) {
	for _, d := range storagetest.Dialects {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			s := newSite(t, d, 2, "")
			team := s.team("Acme", "acme.example.net")
			st, l := s.api("POST", "/api/admin/accounts/"+team+"/signin-links", adminToken, nil)
			if st != 201 || !strings.HasPrefix(l["url"].(string), s.url+"/dashboard/signin/link?token=") {
				t.Fatalf("signin-links: %d %v", st, l)
			}
			exp, err := time.Parse(time.RFC3339, l["expires_at"].(string))
			if d := time.Until(exp); err != nil || d < 23*time.Hour || d > 25*time.Hour {
				t.Fatalf("expires_at %v (%v), want 24h out", l["expires_at"], err)
			}
			if st, _ := s.api("POST", "/api/admin/accounts/acc_none/signin-links", adminToken, nil); st != 404 {
				t.Fatalf("unknown account: %d", st)
			}
			if st, _ := s.api("POST", "/api/admin/accounts/"+team+"/signin-links", "wrong", nil); st != 401 {
				t.Fatalf("without the admin token: %d", st)
			}
			u, _ := url.Parse(l["url"].(string))
			token := u.Query().Get("token")
			var stored string
			if err := s.db.QueryRow("SELECT id FROM signin_links").Scan(&stored); err != nil || stored == token || len(token) < 40 {
				t.Fatalf("stored %q (%v) for token %q: want a hash of a long token", stored, err, token)
			}

			// Opening the link twice (a mail scanner, then the member) spends nothing.
			s.browser().get("/dashboard/signin/link?token=" + token)
			b := s.browser()
			b.signInWithLink(t, token)
			if p := b.get("/dashboard/team"); p.status != 200 || !strings.Contains(p.body, "<h1>Acme</h1>") {
				t.Fatalf("team page: %d %s", p.status, p.body)
			}
			// Once only.
			again := s.browser()
			tok := again.get("/dashboard/signin/link?token=" + token).csrf(t)
			p := again.post("/dashboard/signin/link", url.Values{"csrf": {tok}, "token": {token}})
			if p.status != http.StatusUnauthorized || !strings.Contains(p.body, "used already") {
				t.Fatalf("second use: %d %s", p.status, p.body)
			}
			again.get("/dashboard/team").redirectsTo(t, "/dashboard/signin")

			// Past its 24 hours, unused, it is refused too.
			late := s.link(team)
			s.age("signin_links")
			lb := s.browser()
			tok = lb.get("/dashboard/signin/link?token=" + late).csrf(t)
			if p := lb.post("/dashboard/signin/link", url.Values{"csrf": {tok}, "token": {late}}); p.status != http.StatusUnauthorized {
				t.Fatalf("expired link: %d", p.status)
			}
		})
	}
}
