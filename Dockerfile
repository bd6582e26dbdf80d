# taskflow's container image: `serve` (the default command) or `worker`, on an external
# PostgreSQL only (the embedded one is off: TASKFLOW_DATABASE_URL is required). See
# docs/deploy.md for the environment and for running it behind PgBouncer.
#
#   docker build -t taskflow .
#   docker run --env-file taskflow.env taskflow migrate
#   docker run --env-file taskflow.env -p 8000:8000 taskflow
#   docker run --env-file taskflow.env --no-healthcheck taskflow worker
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    TASKFLOW_EMBEDDED_DATABASE=false \
    TASKFLOW_ENV=prod \
    TASKFLOW_HOST=0.0.0.0 \
    TASKFLOW_PORT=8000 \
    TASKFLOW_DATA_DIR=/var/lib/taskflow \
    TASKFLOW_LOG_FORMAT=json

# The source tree stays whole under /app: the bundled calendars/, examples/ and migrations/
# are found beside the package (an editable install keeps them there).
WORKDIR /app
COPY pyproject.toml README.md LICENSE ./
COPY taskflow ./taskflow
COPY migrations ./migrations
COPY calendars ./calendars
COPY examples ./examples
COPY graphql ./graphql
RUN python -m venv /opt/taskflow \
    && /opt/taskflow/bin/pip install --quiet -e /app \
    && useradd --system --uid 10001 --home-dir /var/lib/taskflow --create-home \
        --shell /usr/sbin/nologin taskflow \
    && chmod 700 /var/lib/taskflow
ENV PATH=/opt/taskflow/bin:$PATH

USER taskflow
EXPOSE 8000

# GET /health answers 200 while the database is reachable, 503 otherwise. A worker
# container has no HTTP port: run it with --no-healthcheck (or healthcheck: disable).
HEALTHCHECK --interval=15s --timeout=3s --start-period=20s --retries=3 \
    CMD ["python", "-c", "import os, urllib.request; urllib.request.urlopen(f\"http://127.0.0.1:{os.environ.get('TASKFLOW_PORT', '8000')}/health\", timeout=2)"]

ENTRYPOINT ["taskflow"]
CMD ["serve"]
