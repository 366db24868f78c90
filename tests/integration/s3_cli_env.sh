# Sourced by the CLI tests against S3: the CLI test library (scratch folder,
# expect_rc, fail), the servers' variables, and the test credentials and
# endpoint in the environment (no AWS files, no profile, no session token).
source "$(dirname "${BASH_SOURCE[0]}")/../cli/testlib.sh"
set -a; source "$FERRY_TEST_SERVERS_ENV"; set +a
export AWS_ACCESS_KEY_ID=$FERRY_TEST_S3_ACCESS_KEY
export AWS_SECRET_ACCESS_KEY=$FERRY_TEST_S3_SECRET_KEY
export AWS_CONFIG_FILE=/nonexistent AWS_SHARED_CREDENTIALS_FILE=/nonexistent
unset AWS_SESSION_TOKEN AWS_PROFILE
export AWS_ENDPOINT_URL=$FERRY_TEST_S3_URL
