package lakehouse.kinesis;

import com.amazonaws.ClientConfiguration;
import com.amazonaws.SDKGlobalConfiguration;
import com.amazonaws.auth.AWSStaticCredentialsProvider;
import com.amazonaws.auth.BasicAWSCredentials;
import com.amazonaws.auth.DefaultAWSCredentialsProviderChain;
import com.amazonaws.client.builder.AwsClientBuilder.EndpointConfiguration;
import com.amazonaws.services.kinesis.AmazonKinesis;
import com.amazonaws.services.kinesis.AmazonKinesisClientBuilder;

/** Builds the AWS SDK v1 Kinesis client, on the driver and on executors alike. */
public final class KinesisClientFactory {
  static final int CONNECT_TIMEOUT_MS = 10_000;
  /** Longest silence inside one response; a GetRecords answer (at most 10 MB) takes far less. */
  static final int SOCKET_TIMEOUT_MS = 20_000;

  private KinesisClientFactory() {}

  public static AmazonKinesis create(KinesisOptions options) {
    // Kinesis emulators speak JSON only; the SDK would otherwise use CBOR. The property is read
    // when a client is built, so it must be set in every JVM before the first client.
    System.setProperty(SDKGlobalConfiguration.AWS_CBOR_DISABLE_SYSTEM_PROPERTY, "true");
    // A call the engine never answers (a dropped connection, an engine starved of CPU) must
    // fail soon enough to be retried and logged (KinesisRetry): with the SDK's 50 s socket
    // timeout and its own silent retries, a read could hang a batch for minutes unseen.
    AmazonKinesisClientBuilder builder = AmazonKinesisClientBuilder.standard()
        .withClientConfiguration(new ClientConfiguration().withMaxConnections(64)
            .withConnectionTimeout(CONNECT_TIMEOUT_MS).withSocketTimeout(SOCKET_TIMEOUT_MS));
    if (options.endpointUrl != null) {
      builder.withEndpointConfiguration(
          new EndpointConfiguration(options.endpointUrl, options.region));
    } else {
      builder.withRegion(options.region);
    }
    if (options.accessKeyId != null) {
      builder.withCredentials(new AWSStaticCredentialsProvider(
          new BasicAWSCredentials(options.accessKeyId, options.secretKey)));
    } else {
      builder.withCredentials(DefaultAWSCredentialsProviderChain.getInstance());
    }
    return builder.build();
  }
}
