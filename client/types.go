package client

// The answers and requests of the admin API, as /openapi.json describes
// them. Fields a command does not need may be left out: decoding ignores
// them, and Client.Answer sees the answer whole.

// Object is an answer this package does not type.
type Object = map[string]any

type Account struct {
	ID         string  `json:"id"`
	Name       string  `json:"name"`
	Plan       string  `json:"plan"`
	Cap        int     `json:"cap"`
	Billing    bool    `json:"billing"`
	Status     string  `json:"status"`
	PlanEndsAt *string `json:"plan_ends_at"`
	ClosedAt   *string `json:"closed_at"`
	CreatedAt  string  `json:"created_at"`
}

// AccountInput is a create or a change; nil fields are not sent.
type AccountInput struct {
	Name    *string `json:"name,omitempty"`
	Plan    *string `json:"plan,omitempty"`
	Cap     *int    `json:"cap,omitempty"`
	Billing *bool   `json:"billing,omitempty"`
	Status  *string `json:"status,omitempty"`
}

type AccountList struct {
	Accounts   []Account `json:"accounts"`
	NextCursor *string   `json:"next_cursor"`
}

// AccountQuery filters and pages the account list.
type AccountQuery struct {
	Name, Status, Cursor string
	Limit                int
}

type Closed struct {
	Closed            bool `json:"closed"`
	HostnamesReleased int  `json:"hostnames_released"`
	KeysRevoked       int  `json:"keys_revoked"`
	TSIGKeysRevoked   int  `json:"tsig_keys_revoked"`
	SessionsEnded     int  `json:"sessions_ended"`
	SigninLinksEnded  int  `json:"signin_links_ended"`
}

type Scope struct {
	Scope    string `json:"scope"`
	Domain   string `json:"domain,omitempty"`
	Hostname string `json:"hostname,omitempty"`
}

type Key struct {
	ID        string  `json:"id"`
	Key       string  `json:"key,omitempty"`
	Name      string  `json:"name"`
	Scopes    []Scope `json:"scopes"`
	ExpiresAt *string `json:"expires_at"`
	CreatedAt string  `json:"created_at"`
}

type KeyInput struct {
	Name      string  `json:"name,omitempty"`
	Scopes    []Scope `json:"scopes,omitempty"`
	ExpiresAt string  `json:"expires_at,omitempty"`
}

type KeyList struct {
	Keys []Key `json:"keys"`
}

type TSIGKey struct {
	ID        string  `json:"id"`
	Name      string  `json:"name"`
	KeyName   string  `json:"key_name"`
	Algorithm string  `json:"algorithm"`
	Secret    string  `json:"secret,omitempty"`
	Scopes    []Scope `json:"scopes"`
	ExpiresAt *string `json:"expires_at"`
	CreatedAt string  `json:"created_at"`
}

type TSIGKeyInput struct {
	Name      string  `json:"name,omitempty"`
	Scopes    []Scope `json:"scopes,omitempty"`
	Algorithm string  `json:"algorithm,omitempty"`
}

type TSIGKeyList struct {
	TSIGKeys []TSIGKey `json:"tsig_keys"`
}

type Domain struct {
	ID          string   `json:"id"`
	Name        string   `json:"name"`
	AccountID   *string  `json:"account_id"`
	Status      string   `json:"status"`
	CAA         []string `json:"caa"`
	DNSSEC      bool     `json:"dnssec"`
	DS          []string `json:"ds"`
	DSPublished bool     `json:"ds_published"`
	NSEC3       bool     `json:"nsec3"`
	Rollover    *string  `json:"rollover"`
	CreatedAt   string   `json:"created_at"`
}

// DomainInput is a create; a change is an Object of the fields to change.
type DomainInput struct {
	Name      string `json:"name"`
	AccountID string `json:"account_id,omitempty"`
	Status    string `json:"status,omitempty"`
}

type DomainList struct {
	Domains []Domain `json:"domains"`
}

// Hostname is a hostname as the operator sees it, with its owner.
type Hostname struct {
	ID         string  `json:"id"`
	Hostname   string  `json:"hostname"`
	IP         string  `json:"ip"`
	RecordType string  `json:"record_type"`
	Target     *string `json:"target"`
	Status     string  `json:"status"`
	ExpiresAt  string  `json:"expires_at"`
	CreatedAt  string  `json:"created_at"`
	AccountID  string  `json:"account_id"`
}

type HostnameList struct {
	Hostnames  []Hostname `json:"hostnames"`
	NextCursor *string    `json:"next_cursor"`
}

// HostnameQuery finds hostnames by one of Hostname, IP and AccountID.
type HostnameQuery struct {
	Hostname, IP, AccountID, Cursor string
	Limit                           int
}

type AuditEntry struct {
	ID        int64  `json:"id"`
	At        string `json:"at"`
	Actor     string `json:"actor"`
	AccountID string `json:"account_id"`
	Action    string `json:"action"`
	Object    string `json:"object"`
	Result    string `json:"result"`
	Status    int    `json:"status"`
	Address   string `json:"address"`
	Detail    string `json:"detail"`
}

type AuditList struct {
	Entries    []AuditEntry `json:"entries"`
	NextCursor *int64       `json:"next_cursor"`
}

// AuditQuery filters and pages the audit log; Since and Until are RFC 3339.
type AuditQuery struct {
	Actor, AccountID, Action, Object, Result, Since, Until string
	Limit                                                  int
	Cursor                                                 int64
}
