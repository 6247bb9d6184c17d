"""The questions of the recall evaluation (bench/recall_eval.py), written by a person: each paraphrase
asks for an entry the way someone who does not remember its words would, so it shares few of them.

Keyword questions are not here: the evaluation derives them from each answer's rarest words, as an
agent searching by keywords would type them.
"""

from __future__ import annotations

# (kind, entry text, paraphrased question): live entries of project "orbit".
FACTS: tuple[tuple[str, str, str], ...] = (
    (
        "fact",
        "No production deploys on Friday; releases wait until Monday morning.",
        "how do we ship on Fridays?",
    ),
    (
        "fact",
        "The orbit API runs on PostgreSQL 15 with pgbouncer in transaction mode.",
        "which database engine backs the service?",
    ),
    (
        "fact",
        "Run the unit tests with `make check`; it wraps pytest with two workers.",
        "what command executes the test suite?",
    ),
    (
        "preference",
        "Alice prefers code review comments written as questions, not orders.",
        "how should I phrase feedback on Alice's pull requests?",
    ),
    (
        "fact",
        "Staging lives at staging.orbit.example and resets its data every night at 02:00 UTC.",
        "when does the pre-production environment get wiped?",
    ),
    (
        "lesson",
        "Retrying a payment capture without the idempotency key charged a customer twice.",
        "why did a client get billed two times?",
    ),
    (
        "fact",
        "Feature flags are managed in LaunchDarkly; the project key is orbit-web.",
        "where do we toggle experimental functionality on or off?",
    ),
    (
        "avoid",
        "Never run database migrations by hand on production; the deploy pipeline applies them.",
        "can I apply a schema change directly on the live server?",
    ),
    (
        "fact",
        "The on-call rotation changes every Tuesday at 10:00 and is kept in PagerDuty.",
        "who is paged this week and when does the shift hand over?",
    ),
    (
        "fact",
        "Invoices are rendered to PDF by a headless Chromium worker in the billing queue.",
        "how are bills turned into printable documents?",
    ),
    (
        "preference",
        "Bob wants commit messages in the imperative mood, under 72 characters.",
        "how should the summary line of a change be worded for Bob?",
    ),
    (
        "lesson",
        "Mocking the clock hid a timezone bug that only showed up in Sydney.",
        "why did a date problem slip past our tests for Australian users?",
    ),
    (
        "fact",
        "The mobile app talks to the backend through the GraphQL gateway, never to REST directly.",
        "how does the phone client reach the server?",
    ),
    (
        "fact",
        "Secrets are stored in Vault under secret/orbit and injected at container start.",
        "where are passwords and tokens kept for the service?",
    ),
    (
        "avoid",
        "Do not add new dependencies to the core package without an architecture review.",
        "can I pull in a third-party library into the main module freely?",
    ),
    (
        "fact",
        "Logs ship to Loki and are retained for 30 days.",
        "how long do we keep application output records?",
    ),
    (
        "fact",
        "Metrics dashboards live in Grafana, folder Orbit, and alert through Alertmanager.",
        "where can I look at charts of how the system behaves?",
    ),
    (
        "lesson",
        "The nightly export timed out because it loaded every row into memory; streaming fixed it.",
        "what made the overnight data dump run too long?",
    ),
    (
        "fact",
        "The search feature uses OpenSearch with an index per tenant.",
        "what powers finding things across customers' content?",
    ),
    (
        "fact",
        "Customer support tickets come in through Zendesk and are triaged daily by the support lead.",
        "how do user complaints reach us?",
    ),
    (
        "preference",
        "Carol likes pair programming sessions in the morning, before lunch.",
        "when is a good time of day to code together with Carol?",
    ),
    (
        "fact",
        "The frontend is built with React 18 and Vite; the design system is in packages/ui.",
        "which framework and bundler does the web client use?",
    ),
    (
        "avoid",
        "Avoid storing personal data in analytics events; hash the user id first.",
        "may I send someone's email address to the tracking tool?",
    ),
    (
        "fact",
        "Backups of the main database run hourly and are kept for 14 days in S3.",
        "how often do we snapshot our data and how far back can we restore?",
    ),
    (
        "lesson",
        "A missing index on orders.customer_id made the account page take eight seconds.",
        "why was the profile screen so slow to load?",
    ),
    (
        "fact",
        "Email is sent through Postmark; templates are in the notifications service.",
        "which provider delivers our outgoing mail?",
    ),
    (
        "fact",
        "The public API is versioned in the URL path, for example /v2/orders.",
        "how do clients pick which edition of the interface they call?",
    ),
    (
        "fact",
        "Rate limiting allows 100 requests per minute per API token.",
        "how many calls can an integration make before being throttled?",
    ),
    (
        "preference",
        "The team writes architecture decision records in docs/adr using the Nygard template.",
        "where and how do we document big technical choices?",
    ),
    (
        "lesson",
        "Caching the exchange rates for a day caused wrong totals during a currency crash.",
        "why were converted amounts off when markets moved sharply?",
    ),
    (
        "fact",
        "Kubernetes manifests are generated with Helm charts in deploy/charts.",
        "where are the cluster deployment templates?",
    ),
    (
        "fact",
        "Sessions expire after 12 hours of inactivity and refresh tokens after 30 days.",
        "how long can someone stay logged in without doing anything?",
    ),
    (
        "avoid",
        "Never log full credit card numbers; the PCI scope depends on it.",
        "is it fine to print payment card details in debug output?",
    ),
    (
        "fact",
        "The CI runs on GitHub Actions with a self-hosted runner for the integration suite.",
        "what builds and checks our pull requests automatically?",
    ),
    (
        "fact",
        "Translations are managed in Crowdin and synced to locales/ by a nightly job.",
        "how do localized strings get into the repository?",
    ),
    (
        "lesson",
        "Deleting a Kafka topic in staging also removed the consumer offsets production relied on.",
        "what went wrong when we cleaned up a message stream?",
    ),
    (
        "fact",
        "The product owner is Dana; roadmap priorities are set in the Monday planning meeting.",
        "who decides what we build next?",
    ),
    (
        "fact",
        "Image uploads are resized by a Lambda function and stored in the media bucket.",
        "what happens to pictures after a user sends them?",
    ),
    (
        "preference",
        "Erin prefers written async updates in Slack over status meetings.",
        "how does Erin like to hear about progress?",
    ),
    (
        "fact",
        "Load tests use k6 scripts in perf/ and run before each major release.",
        "how do we check the system copes with heavy traffic?",
    ),
    (
        "avoid",
        "Do not force-push to main; branch protection will reject it anyway.",
        "can I rewrite history on the primary branch?",
    ),
    (
        "fact",
        "The websocket server handles live notifications and scales on connection count.",
        "how do real-time alerts get pushed to browsers?",
    ),
    (
        "lesson",
        "A daylight saving change made the scheduler run the billing job twice in one night.",
        "why did a recurring charge task fire two times when clocks shifted?",
    ),
    (
        "fact",
        "Error tracking is in Sentry; each release is tagged with the git sha.",
        "where do crashes and exceptions get reported?",
    ),
    (
        "fact",
        "The data warehouse is BigQuery, fed by Fivetran from the main database.",
        "where do analysts run their reporting queries?",
    ),
    (
        "fact",
        "Passwords are hashed with argon2id using the library defaults.",
        "how are user credentials protected at rest?",
    ),
    (
        "preference",
        "Frank wants pull requests under 400 changed lines so reviews stay quick.",
        "how big should a change be when Frank reviews it?",
    ),
    (
        "fact",
        "DNS is managed in Cloudflare and changes go through Terraform in infra/dns.",
        "how do we update domain name records?",
    ),
    (
        "lesson",
        "An expired TLS certificate on the webhook endpoint silently dropped partner callbacks for a day.",
        "why did we stop receiving notifications from partners?",
    ),
    (
        "fact",
        "The admin panel is only reachable over the corporate VPN.",
        "how can staff get to the back-office screens?",
    ),
    (
        "fact",
        "Onboarding new engineers starts with the checklist in docs/onboarding.md.",
        "what should a new hire read on the first day?",
    ),
    (
        "avoid",
        "Avoid using floats for money; amounts are integers in minor units.",
        "what numeric type should hold prices?",
    ),
    (
        "fact",
        "Background jobs run on Celery with Redis as the broker.",
        "what executes asynchronous tasks outside requests?",
    ),
    (
        "fact",
        "The service level objective is 99.9% availability measured monthly.",
        "what uptime target have we promised?",
    ),
    (
        "lesson",
        "Turning on HTTP/2 behind the old load balancer broke file downloads larger than 2 GB.",
        "why did big file transfers fail after a protocol upgrade?",
    ),
    (
        "fact",
        "Accessibility is checked with axe in CI and audited quarterly by an external firm.",
        "how do we make sure disabled people can use the site?",
    ),
    (
        "preference",
        "Grace prefers tabs over spaces in shell scripts and wants shellcheck clean.",
        "what formatting does Grace expect for bash files?",
    ),
    (
        "fact",
        "The pricing page content comes from the Contentful CMS, not from code.",
        "where do marketing folks edit the plans and costs shown to visitors?",
    ),
    (
        "fact",
        "SSO for enterprise customers uses SAML through Okta.",
        "how do big business clients sign in with their company accounts?",
    ),
    (
        "avoid",
        "Do not call external payment APIs from unit tests; use the recorded cassettes.",
        "may tests hit the real card processor?",
    ),
    (
        "lesson",
        "Running two schedulers after a failover sent every reminder email twice.",
        "why did people get duplicate nudges by mail?",
    ),
    (
        "fact",
        "Release notes are drafted automatically from merged PR titles by release-drafter.",
        "how is the changelog for a new version produced?",
    ),
    (
        "fact",
        "The GDPR data export is generated as a zip within 72 hours of the request.",
        "how quickly must we hand a customer a copy of their personal information?",
    ),
    (
        "fact",
        "The CDN is CloudFront, with a cache lifetime of one hour for static assets.",
        "how long do browsers and edges keep our images and scripts?",
    ),
    (
        "preference",
        "Henry reads code reviews only after 3 pm; ping him before then for urgent ones.",
        "when will Henry look at my change request?",
    ),
    (
        "fact",
        "The tax calculation is delegated to Avalara at checkout.",
        "who computes sales levies when someone buys?",
    ),
    (
        "lesson",
        "A regex in the email validator rejected plus-addressed emails and blocked signups.",
        "why could some people not create an account?",
    ),
    (
        "fact",
        "Mobile releases go through TestFlight and the Play internal track a week before launch.",
        "how do we beta test phone app builds?",
    ),
    (
        "fact",
        "Audit logs of admin actions are written to an append-only table and kept for seven years.",
        "how long do we retain the record of what administrators did?",
    ),
    (
        "avoid",
        "Never disable CSRF protection on form endpoints, even for internal tools.",
        "can I turn off cross-site request forgery checks for a back-office form?",
    ),
    (
        "fact",
        "The recommendation model is retrained weekly on Sunday from the last 90 days of clicks.",
        "how fresh is the machine learning that suggests products?",
    ),
    (
        "fact",
        "Webhooks are signed with HMAC-SHA256 and the secret rotates every quarter.",
        "how can partners check that our callbacks are genuine?",
    ),
    (
        "lesson",
        "A cron job written for UTC ran at the wrong hour on the server set to local time.",
        "why did a scheduled task kick off at an unexpected time?",
    ),
    ("fact", "The design files live in Figma, team space Orbit Product.", "where do I find the mockups?"),
    (
        "preference",
        "Ivy wants bug reports to include steps to reproduce and the browser version.",
        "what does Ivy need when I tell her something is broken?",
    ),
    (
        "fact",
        "Database read replicas serve the reporting endpoints to keep load off the primary.",
        "how do heavy report pages avoid slowing down writes?",
    ),
    (
        "fact",
        "The free plan is limited to three projects and one gigabyte of storage.",
        "what can a non-paying account do?",
    ),
    (
        "lesson",
        "Upgrading the ORM changed the default transaction isolation and caused lost updates.",
        "why did concurrent edits overwrite each other after a library bump?",
    ),
    (
        "fact",
        "Incident postmortems are blameless and published in Confluence within five days.",
        "how do we write up what happened after an outage?",
    ),
    (
        "avoid",
        "Avoid editing generated protobuf files; change the .proto and regenerate.",
        "may I patch the compiled message classes by hand?",
    ),
    (
        "fact",
        "Time zones are stored as IANA names and all timestamps in UTC.",
        "how do we keep track of when things happened for users around the world?",
    ),
    (
        "fact",
        "The referral program gives both users a ten dollar credit after the first paid month.",
        "what reward do people get for inviting friends?",
    ),
    (
        "lesson",
        "Letting the disk fill with core dumps took the build agent offline for a weekend.",
        "why was the CI machine down for two days?",
    ),
    (
        "fact",
        "The chat widget on the marketing site is Intercom, answered by sales during office hours.",
        "who talks to visitors using the little message bubble on the homepage?",
    ),
    (
        "preference",
        "Jack wants estimates given as ranges, never single numbers.",
        "how should I tell Jack how long something will take?",
    ),
)

# (old text, correction, question): the correction supersedes the old entry; the old one is dead.
SUPERSEDED: tuple[tuple[str, str, str], ...] = (
    (
        "The staging database password rotates monthly.",
        "The staging database password now rotates weekly, since the audit.",
        "how frequently do the pre-production db credentials change?",
    ),
    (
        "The API gateway is Kong.",
        "The API gateway was moved from Kong to Envoy in October.",
        "what proxy sits in front of our endpoints?",
    ),
    (
        "Code freeze starts two days before a release.",
        "Code freeze starts five days before a release, after the last incident.",
        "how long before shipping do we stop merging?",
    ),
    (
        "Support hours are 9 to 5 Central European Time.",
        "Support hours are now 8 to 8 Central European Time, weekdays only.",
        "when can customers reach a human helper?",
    ),
    (
        "The maximum upload size is 10 MB.",
        "The maximum upload size was raised to 50 MB for paid plans.",
        "how large may an attached file be?",
    ),
    (
        "Node 18 is the runtime for the frontend build.",
        "Node 22 is the runtime for the frontend build since the Vite upgrade.",
        "which JavaScript engine version compiles the web client?",
    ),
    (
        "The quarterly planning happens in the first week of the quarter.",
        "The quarterly planning happens in the last week of the previous quarter.",
        "when do we set goals for the next three months?",
    ),
    (
        "Password reset links are valid for 24 hours.",
        "Password reset links are valid for 30 minutes, per the security review.",
        "how long does a forgot-my-login email keep working?",
    ),
    (
        "Trial accounts last 7 days.",
        "Trial accounts last 14 days since the pricing change.",
        "how long can someone try the product for free?",
    ),
    (
        "The search results page shows 20 items.",
        "The search results page shows 50 items with infinite scroll.",
        "how many matches appear per results screen?",
    ),
)

# (tombstoned text, live text, question): the first entry was deleted; the live one answers.
TOMBSTONED: tuple[tuple[str, str, str], ...] = (
    (
        "The legacy SOAP endpoint for partners is still served at /soap.",
        "Partners integrate only through the REST API; the SOAP endpoint is gone.",
        "how do resellers connect their systems to ours?",
    ),
    (
        "Jenkins builds the Android app.",
        "The Android app is built by Bitrise.",
        "which service compiles the phone application for Google devices?",
    ),
    (
        "Weekly demo on Thursdays at 4 pm.",
        "The sprint demo is every other Friday at 3 pm.",
        "when do we show finished work to stakeholders?",
    ),
    (
        "Redis 6 holds the session store.",
        "Sessions are kept in DynamoDB with a TTL attribute.",
        "where are logged-in user states saved?",
    ),
    (
        "The intern project is the CSV importer.",
        "The CSV importer is owned by the integrations team.",
        "who maintains spreadsheet file uploads?",
    ),
)

# (expired text, live text, question): the first entry's time passed; the live one answers.
EXPIRED: tuple[tuple[str, str, str], ...] = (
    (
        "The payments provider is in a maintenance window this week; expect failed captures.",
        "Payment captures are retried three times with exponential backoff.",
        "what happens when charging a card fails?",
    ),
    (
        "Office is closed until January 3 for the holidays.",
        "The office is open Monday to Thursday; Friday is remote.",
        "which days do people work on site?",
    ),
    (
        "Temporary: the EU cluster is read-only during the migration.",
        "The EU cluster serves all European tenants from Frankfurt.",
        "where are customers in Europe hosted?",
    ),
    (
        "Hotfix branch hotfix/2.3.1 is open for the invoice rounding bug.",
        "Hotfixes branch from the latest release tag and merge back to main.",
        "how do we patch a shipped version urgently?",
    ),
    (
        "The conference booth demo account is demo@orbit.example until the end of the expo.",
        "Sales demos use the sandbox tenant with seeded data.",
        "what account do sellers show prospects?",
    ),
)

# (text in project orbit, text in project nova, question): the same fact in two projects; either answers.
TWO_PROJECTS: tuple[tuple[str, str, str], ...] = (
    (
        "Python 3.12 is the minimum supported version.",
        "The service requires Python 3.12 or newer.",
        "what interpreter release do we need at least?",
    ),
    (
        "Formatting is enforced by ruff format in pre-commit.",
        "ruff format runs as a pre-commit hook to enforce formatting.",
        "what tool keeps code layout consistent before each commit?",
    ),
    (
        "The default branch is main and releases are tagged vX.Y.Z.",
        "Releases are tagged vX.Y.Z on the main branch.",
        "how are shipped versions marked in git?",
    ),
    (
        "Dependabot opens weekly PRs for dependency updates.",
        "Dependency upgrades arrive as weekly Dependabot pull requests.",
        "how do library version bumps get proposed?",
    ),
    (
        "The license of the code is Apache 2.0.",
        "The code is licensed under Apache 2.0.",
        "under what terms may others reuse our source?",
    ),
)

# (text, same thing in other words, question): near-duplicates; either answers.
NEAR_DUPES: tuple[tuple[str, str, str], ...] = (
    (
        "Always run the linter before pushing a branch.",
        "Lint your changes locally before you push.",
        "what should I check on my machine before sending commits upstream?",
    ),
    (
        "The team standup is at 9:30 every weekday.",
        "Daily standup meeting happens at half past nine on workdays.",
        "when is the morning sync call?",
    ),
    (
        "Use UTC for every timestamp stored in the database.",
        "All database timestamps must be stored in UTC.",
        "what clock reference do saved dates use?",
    ),
    (
        "The staging deploy happens automatically after each merge to main.",
        "Every merge to main is deployed to staging automatically.",
        "how does new code reach the test environment?",
    ),
    (
        "API errors return a JSON body with code and message fields.",
        "Error responses from the API are JSON objects holding a code and a message.",
        "what does a failed request send back to the caller?",
    ),
)

# (corpus entry id, question): paraphrases of real entries of the shared corpus (jsonl/).
CORPUS: tuple[tuple[str, str], ...] = (
    ("09a3a387fdf6", "how much space goes between the navigation trail and the page content?"),
    ("2da717145068", "how should I word explanations for the operator, who is not a native speaker?"),
    ("0c3840d44969", "does the translation checker catch enum values missing from both languages?"),
    ("b2d63cb0815f", "git push hangs forever in this repo, how do I fix it?"),
    ("6c1f6b490385", "is it safe to rebuild the long-lived development containers to redeploy?"),
    ("cf077cd60fe4", "can I say something is missing if I only looked at the first lines of output?"),
    ("f5e2edc7eb71", "will a hard reset lose work written into the planning package data?"),
    (
        "6d2d73c6f6ec",
        "why does a setting in the identity provider's exported realm never show up in production?",
    ),
    ("1d77e41772de", "why did tests pass while saving to the real SQL Server was broken?"),
    ("fd0d1fe7d17f", "should I ask the operator questions or decide on my own?"),
    ("9b7a12089e7d", "should the agent's notes be committed along with the code changes?"),
    ("fa47c3aa339c", "what should I run on my machine before sending commits to the remote?"),
    ("c1401fece080", "why is checking whether the process in a leftover lock file is alive not enough?"),
    ("3491c7ed4b61", "how do I rename a term in the Arabic translations correctly?"),
    ("faa1eb99d3ea", "why can't the test find the bucket row's menu control?"),
    ("573f4210e7e3", "what else should a test assert besides the popup notification after saving?"),
    ("d3c35a517cad", "which settings screen do test cases mean by AI Configuration?"),
    ("ce701acbe0a9", "why do async loading races only appear against a real remote host and not in CI?"),
    ("a56bf6f47312", "why can a check that a count of elements is zero pass forever?"),
    ("5cb67fa92df1", "why does waiting for network responses hang on the analytics guide tab?"),
)
