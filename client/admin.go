package client

import (
	"context"
	"fmt"
)

// One method per admin route; TestRoutes holds them to the route table.

func (c *Client) Health(ctx context.Context) (Object, error) {
	var out Object
	return out, c.call(ctx, "GET", "/api/health", nil, nil, nil, &out)
}

func (c *Client) CreateAccount(ctx context.Context, in AccountInput) (*Account, error) {
	out := new(Account)
	return out, c.call(ctx, "POST", "/api/admin/accounts", nil, nil, in, out)
}

func (c *Client) ListAccounts(ctx context.Context, q AccountQuery) (*AccountList, error) {
	out := new(AccountList)
	return out, c.call(ctx, "GET", "/api/admin/accounts", nil,
		values("name", q.Name, "status", q.Status, "cursor", q.Cursor, "limit", itoa(q.Limit)), nil, out)
}

func (c *Client) Account(ctx context.Context, id string) (*Account, error) {
	out := new(Account)
	return out, c.call(ctx, "GET", "/api/admin/accounts/{id}", []string{id}, nil, nil, out)
}

func (c *Client) ChangeAccount(ctx context.Context, id string, in AccountInput) (*Account, error) {
	out := new(Account)
	return out, c.call(ctx, "PATCH", "/api/admin/accounts/{id}", []string{id}, nil, in, out)
}

func (c *Client) CloseAccount(ctx context.Context, id string) (*Closed, error) {
	out := new(Closed)
	return out, c.call(ctx, "DELETE", "/api/admin/accounts/{id}", []string{id}, nil, nil, out)
}

func (c *Client) CreateKey(ctx context.Context, account string, in KeyInput) (*Key, error) {
	out := new(Key)
	return out, c.call(ctx, "POST", "/api/admin/accounts/{id}/keys", []string{account}, nil, in, out)
}

func (c *Client) Keys(ctx context.Context, account string) (*KeyList, error) {
	out := new(KeyList)
	return out, c.call(ctx, "GET", "/api/admin/accounts/{id}/keys", []string{account}, nil, nil, out)
}

func (c *Client) RevokeKey(ctx context.Context, keyID string) error {
	return c.call(ctx, "DELETE", "/api/admin/keys/{key_id}", []string{keyID}, nil, nil, nil)
}

func (c *Client) CreateTSIGKey(ctx context.Context, account string, in TSIGKeyInput) (*TSIGKey, error) {
	out := new(TSIGKey)
	return out, c.call(ctx, "POST", "/api/admin/accounts/{id}/tsig-keys", []string{account}, nil, in, out)
}

func (c *Client) TSIGKeys(ctx context.Context, account string) (*TSIGKeyList, error) {
	out := new(TSIGKeyList)
	return out, c.call(ctx, "GET", "/api/admin/accounts/{id}/tsig-keys", []string{account}, nil, nil, out)
}

func (c *Client) RevokeTSIGKey(ctx context.Context, keyID string) error {
	return c.call(ctx, "DELETE", "/api/admin/tsig-keys/{key_id}", []string{keyID}, nil, nil, nil)
}

func (c *Client) CreateSigninLink(ctx context.Context, account string) (Object, error) {
	var out Object
	return out, c.call(ctx, "POST", "/api/admin/accounts/{id}/signin-links", []string{account}, nil, nil, &out)
}

func (c *Client) TeamAccess(ctx context.Context, account string) (Object, error) {
	var out Object
	return out, c.call(ctx, "GET", "/api/admin/accounts/{id}/sessions", []string{account}, nil, nil, &out)
}

func (c *Client) EndTeamAccess(ctx context.Context, account string) (Object, error) {
	var out Object
	return out, c.call(ctx, "DELETE", "/api/admin/accounts/{id}/sessions", []string{account}, nil, nil, &out)
}

func (c *Client) EndSession(ctx context.Context, account, session string) error {
	return c.call(ctx, "DELETE", "/api/admin/accounts/{id}/sessions/{session_id}", []string{account, session}, nil, nil, nil)
}

func (c *Client) WithdrawSigninLink(ctx context.Context, account, link string) error {
	return c.call(ctx, "DELETE", "/api/admin/accounts/{id}/signin-links/{link_id}", []string{account, link}, nil, nil, nil)
}

func (c *Client) CreateDomain(ctx context.Context, in DomainInput) (*Domain, error) {
	out := new(Domain)
	return out, c.call(ctx, "POST", "/api/admin/domains", nil, nil, in, out)
}

func (c *Client) Domains(ctx context.Context) (*DomainList, error) {
	out := new(DomainList)
	return out, c.call(ctx, "GET", "/api/admin/domains", nil, nil, nil, out)
}

// ChangeDomain sends the fields of change (caa, status, account_id,
// dnssec, ds_published, nsec3, rollover) as they are.
func (c *Client) ChangeDomain(ctx context.Context, id string, change Object) (*Domain, error) {
	out := new(Domain)
	return out, c.call(ctx, "PATCH", "/api/admin/domains/{id}", []string{id}, nil, change, out)
}

func (c *Client) FindHostnames(ctx context.Context, q HostnameQuery) (*HostnameList, error) {
	out := new(HostnameList)
	return out, c.call(ctx, "GET", "/api/admin/hostnames", nil,
		values("hostname", q.Hostname, "ip", q.IP, "account_id", q.AccountID, "cursor", q.Cursor, "limit", itoa(q.Limit)), nil, out)
}

// SuspendHostname, RestoreHostname and TerminateHostname are the [P2] abuse actions.
func (c *Client) SuspendHostname(ctx context.Context, id string) (Object, error) {
	var out Object
	return out, c.call(ctx, "POST", "/api/admin/hostnames/{id}/suspend", []string{id}, nil, nil, &out)
}

func (c *Client) RestoreHostname(ctx context.Context, id string) (Object, error) {
	var out Object
	return out, c.call(ctx, "POST", "/api/admin/hostnames/{id}/restore", []string{id}, nil, nil, &out)
}

func (c *Client) TerminateHostname(ctx context.Context, id string) (Object, error) {
	var out Object
	return out, c.call(ctx, "POST", "/api/admin/hostnames/{id}/terminate", []string{id}, nil, nil, &out)
}

func (c *Client) Audit(ctx context.Context, q AuditQuery) (*AuditList, error) {
	out := new(AuditList)
	cursor := ""
	if q.Cursor > 0 {
		cursor = fmt.Sprint(q.Cursor)
	}
	return out, c.call(ctx, "GET", "/api/admin/audit", nil,
		values("actor", q.Actor, "account_id", q.AccountID, "action", q.Action, "object", q.Object, "result", q.Result,
			"since", q.Since, "until", q.Until, "limit", itoa(q.Limit), "cursor", cursor), nil, out)
}

// Registrations is a page of the acme-dns registrations, in username
// order; cursor is the previous page's next_cursor ("" for the first).
func (c *Client) Registrations(ctx context.Context, cursor string, limit int) (Object, error) {
	var out Object
	return out, c.call(ctx, "GET", "/api/admin/acme-registrations", nil, values("cursor", cursor, "limit", itoa(limit)), nil, &out)
}

func (c *Client) DeleteRegistration(ctx context.Context, username string) error {
	return c.call(ctx, "DELETE", "/api/admin/acme-registrations/{username}", []string{username}, nil, nil, nil)
}
