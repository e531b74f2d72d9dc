/** D69: tables of sign-in with an OpenID provider; migration 0060-oidc. Times are Unix ms. */

/** D69: a provider's subject linked to one person (one subject per person and issuer). */
export interface OidcLinksTable {
  issuer: string;
  subject: string;
  user_id: number;
  created_at: number;
}

/** D69: a sign-in or link begun and not yet finished (10 minutes at most, used once). */
export interface OidcFlowsTable {
  /** SHA-256 (hex) of the `state` sent to the provider */
  state_hash: string;
  nonce: string;
  code_verifier: string;
  /** null: a sign-in; else the person who links their account */
  link_user_id: number | null;
  /** an invite code carried through a sign-in (it joins its guild) */
  invite: string | null;
  created_at: number;
}

export interface OidcTables {
  oidc_links: OidcLinksTable;
  oidc_flows: OidcFlowsTable;
}
