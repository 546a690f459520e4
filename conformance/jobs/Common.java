// Shared pieces of the conformance reference jobs (Flink 2.3 DataStream API):
// a paced source, a keyed sum that emits at end of input, a one-time failure, a two-phase-commit
// sink whose committer writes commits.jsonl, a plain sink for batch output, and a MiniCluster
// driver that runs a job and dumps the REST view of it before the cluster stops.

import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.JobStatus;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.functions.RichMapFunction;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.TypeHint;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.connector.sink2.Committer;
import org.apache.flink.api.connector.sink2.CommitterInitContext;
import org.apache.flink.api.connector.sink2.CommittingSinkWriter;
import org.apache.flink.api.connector.sink2.Sink;
import org.apache.flink.api.connector.sink2.SinkWriter;
import org.apache.flink.api.connector.sink2.SupportsCommitter;
import org.apache.flink.api.connector.sink2.WriterInitContext;
import org.apache.flink.api.connector.source.SplitEnumerator;
import org.apache.flink.api.connector.source.SplitEnumeratorContext;
import org.apache.flink.api.connector.source.lib.NumberSequenceSource;
import org.apache.flink.api.connector.source.lib.util.IteratorSourceEnumerator;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.io.SimpleVersionedSerializer;
import org.apache.flink.runtime.jobgraph.JobGraph;
import org.apache.flink.runtime.jobgraph.JobVertex;
import org.apache.flink.runtime.jobmaster.JobResult;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.runtime.minicluster.MiniClusterConfiguration;
import org.apache.flink.runtime.state.VoidNamespace;
import org.apache.flink.streaming.api.connector.sink2.CommittableMessage;
import org.apache.flink.streaming.api.connector.sink2.CommittableMessageTypeInfo;
import org.apache.flink.streaming.api.connector.sink2.CommittableWithLineage;
import org.apache.flink.streaming.api.connector.sink2.SupportsPreCommitTopology;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.graph.StreamGraph;
import org.apache.flink.streaming.api.operators.AbstractStreamOperator;
import org.apache.flink.streaming.api.operators.BoundedOneInput;
import org.apache.flink.streaming.api.operators.OneInputStreamOperator;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.Serializable;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardOpenOption;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

public final class Common {
    private Common() {}

    public static final TypeInformation<Tuple2<Long, Long>> KV = Types.TUPLE(Types.LONG, Types.LONG);

    // ---------------------------------------------------------------- sources

    /** A NumberSequenceSource whose enumerator hands out a fixed number of splits on request. */
    public static final class SplitSequenceSource extends NumberSequenceSource {
        private final long from, to;
        private final int splits;

        public SplitSequenceSource(long from, long to, int splits) {
            super(from, to);
            this.from = from;
            this.to = to;
            this.splits = splits;
        }

        @Override
        public SplitEnumerator<NumberSequenceSplit, Collection<NumberSequenceSplit>> createEnumerator(
                SplitEnumeratorContext<NumberSequenceSplit> ctx) {
            return new IteratorSourceEnumerator<>(ctx, splitNumberRange(from, to, splits));
        }
    }

    /**
     * A bounded source of {@code records} numbers 0..records-1, turned into (key, value) =
     * (seq % 16, seq % 100 + 1) by a map that sleeps {@code intervalMicros} per record and is
     * chained into the source (one task, like flinksim's record_interval). Name: source "name",
     * pacing map "name" too, so the job vertex is "Source: name -> name".
     */
    public static DataStream<Tuple2<Long, Long>> pacedSource(
            StreamExecutionEnvironment env, String name, long records, int parallelism, long intervalMicros) {
        return env.fromSource(new NumberSequenceSource(0, records - 1), WatermarkStrategy.noWatermarks(), name)
                .uid(name + "-source")
                .setParallelism(parallelism)
                .map(new Pace(intervalMicros, null))
                .returns(KV)
                .name(name)
                .uid(name)
                .setParallelism(parallelism);
    }

    /** Sleeps per record (optionally a different time per subtask) and maps seq -> (key, value). */
    public static final class Pace extends RichMapFunction<Long, Tuple2<Long, Long>> {
        private final long micros;
        private final long[] perSubtaskMicros;

        public Pace(long micros, long[] perSubtaskMicros) {
            this.micros = micros;
            this.perSubtaskMicros = perSubtaskMicros;
        }

        @Override
        public Tuple2<Long, Long> map(Long seq) throws Exception {
            long us = micros;
            if (perSubtaskMicros != null) {
                int i = getRuntimeContext().getTaskInfo().getIndexOfThisSubtask();
                us = perSubtaskMicros[i % perSubtaskMicros.length];
            }
            sleepMicros(us);
            return Tuple2.of(seq % 16, seq % 100 + 1);
        }
    }

    public static void sleepMicros(long us) throws InterruptedException {
        if (us <= 0) return;
        if (us % 1000 == 0) Thread.sleep(us / 1000);
        else TimeUnit.MICROSECONDS.sleep(us);
    }

    // ---------------------------------------------------------------- operators

    /** Passes records on, sleeping per record; throws once on attempt 0 of a subtask at record k. */
    public static final class SlowOrFailingMap extends RichMapFunction<Tuple2<Long, Long>, Tuple2<Long, Long>> {
        private final long micros;
        private final int failSubtask;
        private final long failAt; // 1-based record count; <= 0: never
        private transient long count;

        public SlowOrFailingMap(long micros, int failSubtask, long failAt) {
            this.micros = micros;
            this.failSubtask = failSubtask;
            this.failAt = failAt;
        }

        @Override
        public Tuple2<Long, Long> map(Tuple2<Long, Long> r) throws Exception {
            count++;
            if (failAt > 0 && count == failAt
                    && getRuntimeContext().getTaskInfo().getAttemptNumber() == 0
                    && getRuntimeContext().getTaskInfo().getIndexOfThisSubtask() == failSubtask) {
                throw new RuntimeException("conformance: injected failure at record " + count);
            }
            sleepMicros(micros);
            return r;
        }
    }

    /**
     * Keyed sum in checkpointed keyed state; at end of input emits one (key, total) per key it
     * owns (flinksim's keyed_sum). Optionally fails once on attempt 0 of one subtask at its
     * failAt-th input record (1-based).
     */
    public static final class KeyedSum extends AbstractStreamOperator<Tuple2<Long, Long>>
            implements OneInputStreamOperator<Tuple2<Long, Long>, Tuple2<Long, Long>>, BoundedOneInput {
        private final int failSubtask;
        private final long failAt;
        private transient ValueState<Long> sum;
        private transient long count;

        public KeyedSum(int failSubtask, long failAt) {
            this.failSubtask = failSubtask;
            this.failAt = failAt;
        }

        @Override
        public void open() throws Exception {
            super.open();
            sum = getRuntimeContext().getState(new ValueStateDescriptor<>("sum", Types.LONG));
        }

        @Override
        public void processElement(StreamRecord<Tuple2<Long, Long>> element) throws Exception {
            count++;
            if (failAt > 0 && count == failAt
                    && getRuntimeContext().getTaskInfo().getAttemptNumber() == 0
                    && getRuntimeContext().getTaskInfo().getIndexOfThisSubtask() == failSubtask) {
                throw new RuntimeException("conformance: injected failure at input record " + count);
            }
            Long s = sum.value();
            sum.update((s == null ? 0L : s) + element.getValue().f1);
        }

        @Override
        public void endInput() throws Exception {
            List<Long> keys;
            org.apache.flink.runtime.state.KeyedStateBackend<Long> kb = getKeyedStateBackend();
            try (java.util.stream.Stream<Long> ks = kb.getKeys("sum", VoidNamespace.INSTANCE)) {
                keys = ks.sorted().collect(Collectors.toList());
            }
            for (Long k : keys) {
                setCurrentKey(k);
                Long s = sum.value();
                if (s != null) output.collect(new StreamRecord<>(Tuple2.of(k, s)));
            }
        }
    }

    // ---------------------------------------------------------------- two-phase-commit sink

    /** One record as the writer saw it: writer-local sequence number, key, value. */
    public static final class Rec implements Serializable {
        public long seq, key, value;

        public Rec(long seq, long key, long value) {
            this.seq = seq;
            this.key = key;
            this.value = value;
        }
    }

    /** The committable: a writer attempt's records since its last prepareCommit, tagged with the checkpoint id. */
    public static final class Txn implements Serializable {
        public long checkpoint = -1;
        public int writer, attempt;
        public List<Rec> records = new ArrayList<>();
    }

    public static final class TxnSerializer implements SimpleVersionedSerializer<Txn>, Serializable {
        @Override
        public int getVersion() {
            return 1;
        }

        @Override
        public byte[] serialize(Txn t) throws IOException {
            ByteArrayOutputStream bos = new ByteArrayOutputStream();
            DataOutputStream out = new DataOutputStream(bos);
            out.writeLong(t.checkpoint);
            out.writeInt(t.writer);
            out.writeInt(t.attempt);
            out.writeInt(t.records.size());
            for (Rec r : t.records) {
                out.writeLong(r.seq);
                out.writeLong(r.key);
                out.writeLong(r.value);
            }
            out.flush();
            return bos.toByteArray();
        }

        @Override
        public Txn deserialize(int version, byte[] bytes) throws IOException {
            DataInputStream in = new DataInputStream(new ByteArrayInputStream(bytes));
            Txn t = new Txn();
            t.checkpoint = in.readLong();
            t.writer = in.readInt();
            t.attempt = in.readInt();
            int n = in.readInt();
            for (int i = 0; i < n; i++) t.records.add(new Rec(in.readLong(), in.readLong(), in.readLong()));
            return t;
        }
    }

    /**
     * Sink + SupportsCommitter + SupportsPreCommitTopology. The writer buffers records into a
     * Txn per checkpoint; the pre-commit topology (a map chained between writer and committer)
     * stamps each committable with the checkpoint id of its CommittableWithLineage; the
     * committer appends one JSON line per record to commitLog.
     */
    public static final class TwoPhaseCommitSink
            implements Sink<Tuple2<Long, Long>>, SupportsCommitter<Txn>, SupportsPreCommitTopology<Txn, Txn> {
        private final String name;
        private final String commitLog;

        public TwoPhaseCommitSink(String name, String commitLog) {
            this.name = name;
            this.commitLog = commitLog;
        }

        @Override
        public SinkWriter<Tuple2<Long, Long>> createWriter(WriterInitContext ctx) {
            return new TxnWriter(ctx.getTaskInfo().getIndexOfThisSubtask(), ctx.getTaskInfo().getAttemptNumber());
        }

        @Override
        public Committer<Txn> createCommitter(CommitterInitContext ctx) {
            return new JsonCommitter(commitLog, name, ctx.getTaskInfo().getIndexOfThisSubtask());
        }

        @Override
        public SimpleVersionedSerializer<Txn> getCommittableSerializer() {
            return new TxnSerializer();
        }

        @Override
        public SimpleVersionedSerializer<Txn> getWriteResultSerializer() {
            return new TxnSerializer();
        }

        @Override
        public DataStream<CommittableMessage<Txn>> addPreCommitTopology(DataStream<CommittableMessage<Txn>> in) {
            return in.map(new StampCheckpoint())
                    .returns(CommittableMessageTypeInfo.of(TxnSerializer::new))
                    .name("stamp")
                    .uid(name + "-stamp")
                    .setParallelism(in.getParallelism());
        }
    }

    public static final class StampCheckpoint
            implements org.apache.flink.api.common.functions.MapFunction<CommittableMessage<Txn>, CommittableMessage<Txn>> {
        @Override
        public CommittableMessage<Txn> map(CommittableMessage<Txn> m) {
            if (m instanceof CommittableWithLineage) {
                CommittableWithLineage<Txn> c = (CommittableWithLineage<Txn>) m;
                final long id = c.getCheckpointId();
                return c.map(t -> {
                    t.checkpoint = id;
                    return t;
                });
            }
            return m;
        }
    }

    public static final class TxnWriter implements CommittingSinkWriter<Tuple2<Long, Long>, Txn> {
        private final int writer, attempt;
        private long seq;
        private Txn current;

        TxnWriter(int writer, int attempt) {
            this.writer = writer;
            this.attempt = attempt;
        }

        @Override
        public void write(Tuple2<Long, Long> r, Context ctx) {
            if (current == null) {
                current = new Txn();
                current.writer = writer;
                current.attempt = attempt;
            }
            current.records.add(new Rec(seq++, r.f0, r.f1));
        }

        @Override
        public Collection<Txn> prepareCommit() {
            if (current == null) return Collections.emptyList();
            Txn t = current;
            current = null;
            return Collections.singletonList(t);
        }

        @Override
        public void flush(boolean endOfInput) {}

        @Override
        public void close() {}
    }

    private static final Object FILE_LOCK = new Object();

    static void appendLines(String path, List<String> lines) throws IOException {
        if (lines.isEmpty()) return;
        StringBuilder sb = new StringBuilder();
        for (String l : lines) sb.append(l).append('\n');
        synchronized (FILE_LOCK) {
            Files.write(Paths.get(path), sb.toString().getBytes(StandardCharsets.UTF_8),
                    StandardOpenOption.CREATE, StandardOpenOption.APPEND, StandardOpenOption.WRITE);
        }
    }

    public static final class JsonCommitter implements Committer<Txn> {
        private final String path;
        private final String sink;
        private final int committer;

        JsonCommitter(String path, String sink, int committer) {
            this.path = path;
            this.sink = sink;
            this.committer = committer;
        }

        @Override
        public void commit(Collection<CommitRequest<Txn>> requests) throws IOException {
            List<String> lines = new ArrayList<>();
            for (CommitRequest<Txn> req : requests) {
                Txn t = req.getCommittable();
                String time = Instant.now().toString();
                for (Rec r : t.records) {
                    lines.add(String.format(
                            "{\"checkpoint\": %d, \"writer\": %d, \"attempt\": %d, \"seq\": %d, \"key\": %d, \"value\": %d, \"committer\": %d, \"time\": \"%s\", \"sink\": \"%s\"}",
                            t.checkpoint, t.writer, t.attempt, r.seq, r.key, r.value, committer, time, sink));
                }
            }
            appendLines(path, lines);
        }

        @Override
        public void close() {}
    }

    // ---------------------------------------------------------------- batch output sink

    /** A plain sink (no committer) that appends one JSON line per received record to a file. */
    public static final class JsonLinesSink implements Sink<Tuple2<Long, Long>> {
        private final String path;

        public JsonLinesSink(String path) {
            this.path = path;
        }

        @Override
        public SinkWriter<Tuple2<Long, Long>> createWriter(WriterInitContext ctx) {
            final int writer = ctx.getTaskInfo().getIndexOfThisSubtask();
            final int attempt = ctx.getTaskInfo().getAttemptNumber();
            return new SinkWriter<Tuple2<Long, Long>>() {
                long seq;

                @Override
                public void write(Tuple2<Long, Long> r, Context c) throws IOException {
                    appendLines(path, Collections.singletonList(String.format(
                            "{\"writer\": %d, \"attempt\": %d, \"seq\": %d, \"key\": %d, \"value\": %d, \"time\": \"%s\"}",
                            writer, attempt, seq++, r.f0, r.f1, Instant.now().toString())));
                }

                @Override
                public void flush(boolean endOfInput) {}

                @Override
                public void close() {}
            };
        }
    }

    // ---------------------------------------------------------------- MiniCluster driver

    /** Configuration shared by every streaming job (cluster and job level). */
    public static Configuration streamingConf() {
        Configuration c = new Configuration();
        c.setString("rest.bind-port", "0");
        c.setString("rest.address", "localhost");
        c.setString("web.checkpoints.history", "1000");
        c.setString("rest.cache.checkpoint-statistics.timeout", "1 ms");
        c.setString("restart-strategy.type", "fixed-delay");
        c.setString("restart-strategy.fixed-delay.attempts", "3");
        c.setString("restart-strategy.fixed-delay.delay", "100 ms");
        c.setString("jobmanager.execution.failover-strategy", "region");
        c.setString("taskmanager.numberOfTaskSlots", "8");
        return c;
    }

    /** Command line: &lt;runDir&gt;. Files: runDir/commits.jsonl, runDir/rest/*, runDir/driver.json. */
    public static Path runDir(String[] args) throws IOException {
        if (args.length < 1) throw new IllegalArgumentException("usage: Job <runDir>");
        Path p = Paths.get(args[0]).toAbsolutePath();
        Files.createDirectories(p.resolve("rest"));
        return p;
    }

    /**
     * Runs the environment's job on a MiniCluster (1 TaskManager, 8 slots), waits for its
     * result, dumps the REST view, and writes driver.json (job id, status, vertices, wall time,
     * params) for the run script.
     */
    public static void runOnMiniCluster(StreamExecutionEnvironment env, Configuration conf, String jobName,
                                        Path dir, Map<String, Object> params) throws Exception {
        StreamGraph sg = env.getStreamGraph();
        sg.setJobName(jobName);
        JobGraph jg = sg.getJobGraph();
        MiniClusterConfiguration mcc = new MiniClusterConfiguration.Builder()
                .setConfiguration(conf).setNumTaskManagers(1).setNumSlotsPerTaskManager(8).build();
        String status = "UNKNOWN";
        try (MiniCluster mc = new MiniCluster(mcc)) {
            mc.start();
            String rest = mc.getRestAddress().get().toString().replaceAll("/$", "");
            String startedAt = Instant.now().toString();
            long t0 = System.nanoTime();
            JobID jid = mc.submitJob(jg).get().getJobID();
            JobResult result = mc.requestJobResult(jid).get();
            long wallMs = (System.nanoTime() - t0) / 1_000_000;
            status = result.getJobStatus().map(Enum::name).orElse(result.isSuccess() ? "FINISHED" : "FAILED");
            if (result.getSerializedThrowable().isPresent()) {
                System.err.println("job failed: " + result.getSerializedThrowable().get().getFullStringifiedStackTrace());
            }
            List<String> vids = new ArrayList<>();
            for (JobVertex jv : jg.getVertices()) vids.add(jv.getID().toString());
            dumpRest(rest, jid.toString(), dir.resolve("rest"), vids);
            StringBuilder v = new StringBuilder();
            for (JobVertex jv : jg.getVertices()) {
                if (v.length() > 0) v.append(", ");
                v.append(String.format("{\"id\": \"%s\", \"name\": %s, \"parallelism\": %d}",
                        jv.getID(), json(jv.getName()), jv.getParallelism()));
            }
            String driver = String.format(
                    "{\"job_id\": \"%s\", \"status\": \"%s\", \"started_at\": \"%s\", \"wall_ms\": %d, \"params\": %s, \"vertices\": [%s]}\n",
                    jid, status, startedAt, wallMs, json(params), v);
            Files.write(dir.resolve("driver.json"), driver.getBytes(StandardCharsets.UTF_8));
        }
        System.out.println("status " + status);
        System.exit(JobStatus.FINISHED.name().equals(status) ? 0 : 1);
    }

    // ---------------------------------------------------------------- REST dump

    static String get(HttpClient http, String url) throws Exception {
        HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create(url)).GET().build(),
                HttpResponse.BodyHandlers.ofString());
        return r.body();
    }

    /** job.json, checkpoints.json and, if wanted, every checkpoint's details and per-vertex subtasks. */
    public static void dumpRest(String rest, String jid, Path out, List<String> vertexIds) throws Exception {
        HttpClient http = HttpClient.newHttpClient();
        String job = get(http, rest + "/jobs/" + jid);
        Files.write(out.resolve("job.json"), job.getBytes(StandardCharsets.UTF_8));
        if (vertexIds == null) return;
        String cps = get(http, rest + "/jobs/" + jid + "/checkpoints");
        Files.write(out.resolve("checkpoints.json"), cps.getBytes(StandardCharsets.UTF_8));
        int hist = cps.indexOf("\"history\"");
        if (hist < 0) return;
        Matcher cm = Pattern.compile("\"id\"\\s*:\\s*(\\d+)").matcher(cps.substring(hist));
        List<String> ids = new ArrayList<>();
        while (cm.find()) if (!ids.contains(cm.group(1))) ids.add(cm.group(1));
        for (String id : ids) {
            String d = get(http, rest + "/jobs/" + jid + "/checkpoints/details/" + id);
            Files.write(out.resolve("checkpoint-" + id + ".json"), d.getBytes(StandardCharsets.UTF_8));
            for (String vid : vertexIds) {
                String s = get(http, rest + "/jobs/" + jid + "/checkpoints/details/" + id + "/subtasks/" + vid);
                Files.write(out.resolve("checkpoint-" + id + "-subtasks-" + vid + ".json"), s.getBytes(StandardCharsets.UTF_8));
            }
        }
    }

    // ---------------------------------------------------------------- tiny JSON writer

    @SuppressWarnings("unchecked")
    public static String json(Object o) {
        if (o == null) return "null";
        if (o instanceof Number || o instanceof Boolean) return o.toString();
        if (o instanceof Map) {
            StringBuilder sb = new StringBuilder("{");
            for (Map.Entry<String, Object> e : ((Map<String, Object>) o).entrySet()) {
                if (sb.length() > 1) sb.append(", ");
                sb.append(json(e.getKey())).append(": ").append(json(e.getValue()));
            }
            return sb.append('}').toString();
        }
        if (o instanceof List) {
            StringBuilder sb = new StringBuilder("[");
            for (Object e : (List<Object>) o) {
                if (sb.length() > 1) sb.append(", ");
                sb.append(json(e));
            }
            return sb.append(']').toString();
        }
        String s = o.toString();
        StringBuilder sb = new StringBuilder("\"");
        for (char ch : s.toCharArray()) {
            if (ch == '"' || ch == '\\') sb.append('\\').append(ch);
            else if (ch < 0x20) sb.append(String.format("\\u%04x", (int) ch));
            else sb.append(ch);
        }
        return sb.append('"').toString();
    }

    public static Map<String, Object> map(Object... kv) {
        Map<String, Object> m = new LinkedHashMap<>();
        for (int i = 0; i < kv.length; i += 2) m.put((String) kv[i], kv[i + 1]);
        return m;
    }
}
