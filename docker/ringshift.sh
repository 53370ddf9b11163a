#!/bin/sh
# The ringshift CLI in the image: RINGSHIFT_JAVA_OPTS adds JVM options (heap, GC).
exec java ${RINGSHIFT_JAVA_OPTS:-} -jar /opt/ringshift/ringshift.jar "$@"
