package org.apache.hadoop.hive.common.auth;

import java.net.InetSocketAddress;
import java.util.List;
import org.apache.thrift.transport.TSSLTransportFactory;
import org.apache.thrift.transport.TServerSocket;
import org.apache.thrift.transport.TSocket;
import org.apache.thrift.transport.TTransport;
import org.apache.thrift.transport.TTransportException;

/**
 * Replaces Hive 2.3's HiveAuthUtils on the local-mode metastore's classpath (placed before
 * pyspark's hive-common jar), for one reason: Hive 2.3's metastore always asks for a server
 * socket on every interface (host null), and has no setting to bind it elsewhere. Here a null
 * host means the address in the system property {@code metastore.bind.host} (the launcher sets
 * 127.0.0.1), and every interface only if that is unset.
 *
 * <p>The metastore server runs without SSL here, so the SSL server socket is refused loudly
 * rather than half-supported; the client-side methods keep Hive's behaviour.
 */
public class HiveAuthUtils {
  public static final String BIND_HOST_PROPERTY = "metastore.bind.host";

  public static TServerSocket getServerSocket(String host, int port) throws TTransportException {
    String bind = host == null || host.isEmpty() ? System.getProperty(BIND_HOST_PROPERTY) : host;
    InetSocketAddress address =
        bind == null || bind.isEmpty() ? new InetSocketAddress(port) : new InetSocketAddress(bind, port);
    return new TServerSocket(address);
  }

  public static TServerSocket getServerSSLSocket(
      String host, int port, String keyStorePath, String keyStorePassword, List<String> excluded)
      throws TTransportException {
    throw new TTransportException(
        "SSL is not supported by the sandbox's loopback metastore build "
            + "(services/hive-metastore/bind); set hive.metastore.use.SSL=false");
  }

  public static TTransport getSocketTransport(String host, int port, int loginTimeout) {
    return new TSocket(host, port, loginTimeout);
  }

  public static TTransport getSSLSocket(String host, int port, int loginTimeout)
      throws TTransportException {
    return TSSLTransportFactory.getClientSocket(host, port, loginTimeout);
  }

  public static TTransport getSSLSocket(
      String host, int port, int loginTimeout, String trustStorePath, String trustStorePassword)
      throws TTransportException {
    TSSLTransportFactory.TSSLTransportParameters params =
        new TSSLTransportFactory.TSSLTransportParameters();
    params.setTrustStore(trustStorePath, trustStorePassword);
    params.requireClientAuth(true);
    return TSSLTransportFactory.getClientSocket(host, port, loginTimeout, params);
  }
}
