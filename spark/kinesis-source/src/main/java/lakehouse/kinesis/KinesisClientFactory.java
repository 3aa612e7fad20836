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
  private KinesisClientFactory() {}

  public static AmazonKinesis create(KinesisOptions options) {
    // Kinesis emulators speak JSON only; the SDK would otherwise use CBOR. The property is read
    // when a client is built, so it must be set in every JVM before the first client.
    System.setProperty(SDKGlobalConfiguration.AWS_CBOR_DISABLE_SYSTEM_PROPERTY, "true");
    AmazonKinesisClientBuilder builder = AmazonKinesisClientBuilder.standard()
        .withClientConfiguration(new ClientConfiguration().withMaxConnections(64));
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
