package lakehouse.kinesis;

import java.util.List;

/**
 * AT_TIMESTAMP done by hand: pages read from TRIM_HORIZON, without the records that arrived before
 * the first one at or after the timestamp. {@link ShardCursor} falls back to it when an engine does
 * not answer GetShardIterator(AT_TIMESTAMP): kinesalite never does while the shard holds no record
 * from that time on.
 */
public final class ArrivalScan {
  private ArrivalScan() {}

  /**
   * The first page holding a record that arrived at or after {@code timestampMillis}, from that
   * record on; or an empty page once the shard's tip or end is reached without one. Skipped pages
   * are read on inside this call: an empty page returned early would look like the tip (kinesalite
   * says MillisBehindLatest 0 on every page) and the scan would start over at the next batch.
   */
  public static Page skipUntil(RecordSource source, int limit, long timestampMillis) {
    while (true) {
      Page page = source.next(limit);
      List<KinesisRecord> records = page.records;
      int first = 0;
      while (first < records.size()
          && records.get(first).approximateArrivalMillis < timestampMillis) {
        first++;
      }
      if (first < records.size()) {
        return new Page(records.subList(first, records.size()), page.endOfShard,
            page.millisBehindLatest);
      }
      if (page.endOfShard || page.reachedTip(limit)) {
        return new Page(List.of(), page.endOfShard, page.millisBehindLatest);
      }
    }
  }
}
